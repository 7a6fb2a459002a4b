"""The harness that tests/ and bench/ share: real commands run as a user would, and real
servers that misbehave on purpose.

- :mod:`harness.commands`: ``curll`` and ``dvc`` as subprocesses in a temp project, the
  guard against a hung child (``HANG``), and ``on_random_model`` (every LLM stage on the tiny
  random model).
- :mod:`harness.server`: a real OpenAI-compatible HTTP server on loopback whose answers a
  test scripts (``FakeChatServer``); :mod:`harness.mix` adds seeded faults (``FaultyServer``).
- :mod:`harness.kill`: SIGKILL a stage at a chosen point and read what it left.
- :mod:`harness.project`: a small generate-only project on a server's URL.
- :mod:`harness.verify`: the verify stage on tables in memory (``verify``).

It lives here, not in tests/, so that benchmarks import nothing from the test suite.
"""
