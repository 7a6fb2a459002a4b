"""The harness that tests/ and bench/ share: real commands run as a user would, and real
servers that misbehave on purpose.

- :mod:`bench.harness.commands`: ``curll`` and ``dvc`` as subprocesses in a temp project, the
  guard against a hung child (``HANG``), and ``on_random_model`` (every LLM stage on the tiny
  random model).
- :mod:`bench.harness.server`: a real OpenAI-compatible HTTP server on loopback whose answers a
  test scripts (``FakeChatServer``); :mod:`bench.harness.mix` adds seeded faults (``FaultyServer``).
- :mod:`bench.harness.kill`: SIGKILL a stage at a chosen point and read what it left.
- :mod:`bench.harness.project`: a small generate-only project on a server's URL.
- :mod:`bench.harness.verify`: the verify stage on tables in memory (``verify``).

It lives here, not in tests/, so that benchmarks import nothing from the test suite.
"""
