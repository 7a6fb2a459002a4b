"""The LLM layer: one Protocol, plain backend classes, and an engine that adds caching,
structured-output validation, attempts and recorded rejects.

Public API::

    from curll.llm import ChatRequest, Engine, RequestCache, Sampling
    from curll.llm.openai_backend import OpenAIBackend

    engine = Engine(OpenAIBackend("m", base_url="http://127.0.0.1:8000/v1"), RequestCache("cache.db"))
    results = engine.run([ChatRequest.build([("user", "Hi")], schema={...})])

Backends are imported from their own modules so their heavy dependencies load only when used.
"""

from curll.llm.cache import RequestCache
from curll.llm.engine import Engine, parse
from curll.llm.protocol import Backend
from curll.llm.types import ChatRequest, Completion, Message, Result, Sampling, canonical_json

__all__ = [
    "Backend",
    "ChatRequest",
    "Completion",
    "Engine",
    "Message",
    "RequestCache",
    "Result",
    "Sampling",
    "canonical_json",
    "parse",
]
