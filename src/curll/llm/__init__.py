"""The LLM layer: one Protocol, plain backend classes, and an engine that adds caching,
structured-output validation, attempts and recorded rejects.

Public API::

    from curll.llm.cache import RequestCache
    from curll.llm.engine import Engine
    from curll.llm.openai_backend import OpenAIBackend
    from curll.llm.types import ChatRequest

    engine = Engine(OpenAIBackend("m", base_url="http://127.0.0.1:8000/v1"), RequestCache("cache.db"))
    results = engine.run([ChatRequest.build([("user", "Hi")], schema={...})])

This package imports nothing: import from the modules (types, protocol, engine, cache, and one
per backend), so heavy dependencies load only when used and a stage's DVC deps name only the
modules it runs.
"""
