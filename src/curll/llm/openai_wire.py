"""What an OpenAI-compatible server's replies mean: a completion's fields, and which errors to retry.

- :func:`completion_fields` reads a 200 body, as the client parsed it, into text, token counts
  and finish reason; a body that is not a chat completion is a ValueError (retried).
- :func:`whole_completion` asks for one answer whole; :func:`stream_completion` streams it and
  cuts it off (``finish_reason="loop"``) once it falls into a loop. Either stops reading an
  answer longer than its ``max_tokens`` could make (:func:`answer_limits`): a ValueError,
  retried like a malformed body, never stored.
- :func:`retry_after` says how long to wait before asking again, or None where the error is final.
"""

from __future__ import annotations

import importlib
import json
import math
import random
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from curll.errors import one_line
from curll.llm.loops import LOOP_CHECK_EVERY, find_loop

RETRY_STATUS = frozenset({408, 409, 429})
#: a server error whose message blames the request is final, not transient
INVALID = re.compile(
    r"invalid[ _]request|not supported|unsupported|does not support|must be one of|unknown (field|parameter)",
    re.IGNORECASE,
)
BACKOFF_S, BACKOFF_MAX_S = 0.5, 30.0
#: the most of a server's error text kept in a reason or a message (cut after the key is redacted:
#: a cut key would no longer match)
SAID_CHARS = 300


#: the most characters a token may stand for, on average over an answer: an answer longer than
#: ``max_tokens`` times this is not one the server made within ``max_tokens``
MAX_CHARS_PER_TOKEN = 64
#: a body's room beyond its text: JSON escapes (up to 6 bytes a character) and the other fields
BODY_BYTES_PER_CHAR, BODY_SLACK_BYTES = 6, 1 << 20


def answer_limits(kwargs: Mapping[str, Any]) -> tuple[int, int]:
    """(most characters of text, most bytes of body) of an answer to a request of ``kwargs``."""
    chars = int(kwargs.get("max_tokens") or 4096) * MAX_CHARS_PER_TOKEN
    return chars, chars * BODY_BYTES_PER_CHAR + BODY_SLACK_BYTES


def _too_long(what: str, size: int, limit: int, kwargs: Mapping[str, Any]) -> ValueError:
    return ValueError(f"the answer's {what} passed {limit} ({size} read): longer than max_tokens = "
                      f"{kwargs.get('max_tokens')} can make; is the server ignoring max_tokens?")  # fmt: skip


class AttemptTimeoutError(TimeoutError):
    """One HTTP request ran past ``timeout_s``; ``answered``: its response headers had come."""

    def __init__(self, seconds: float, answered: bool) -> None:
        when = "after the response headers" if answered else "no response headers"
        super().__init__(f"no complete answer within timeout_s = {seconds:g} s ({when})")
        self.answered = answered


async def whole_completion(client: Any, kwargs: dict[str, Any], heard: list[bool]) -> dict[str, Any]:
    """One completion, whole: text, token counts and finish reason (``heard`` gets an entry when
    the response headers come). The body is read up to :func:`answer_limits`' bytes, then
    parsed as JSON; a body that is not JSON is a ValueError naming how it starts."""
    chars, limit = answer_limits(kwargs)
    async with client.chat.completions.with_streaming_response.create(**kwargs) as response:
        heard.append(True)  # the headers are in; the body is read here, decoded (gzip...)
        body = bytearray()
        async for chunk in response.iter_bytes():
            body += chunk
            if len(body) > limit:
                raise _too_long("body in bytes", len(body), limit, kwargs)
    try:
        resp = json.loads(body)
    except ValueError:
        start = bytes(body[:40]).decode("utf-8", "replace")
        raise ValueError(f"the answer is not JSON (it starts {start!r})") from None
    done = completion_fields(resp)
    if len(done["text"]) > chars:
        raise _too_long("text in characters", len(done["text"]), chars, kwargs)
    return done


async def stream_completion(client: Any, kwargs: dict[str, Any], heard: list[bool]) -> dict[str, Any]:
    """One completion, streamed, cut off (``finish_reason="loop"``) when it falls into a loop. A
    stream that ends with no ``finish_reason`` (the connection closed mid-answer) is a
    ValueError, retried like a malformed body: a cut answer is never returned."""
    stream = await client.chat.completions.create(
        **kwargs, stream=True, stream_options={"include_usage": True}
    )
    heard.append(True)
    pieces: list[str] = []
    finish, usage, size = "", None, 0
    chars, _ = answer_limits(kwargs)
    import openai

    try:
        async for chunk in stream:
            usage = chunk.usage or usage
            if not chunk.choices:
                continue
            finish = chunk.choices[0].finish_reason or finish
            piece = chunk.choices[0].delta.content
            if piece:
                pieces.append(piece)
                size += len(piece)
                if size > chars:
                    raise _too_long("text in characters", size, chars, kwargs)
                if len(pieces) % LOOP_CHECK_EVERY == 0 and find_loop(pieces):
                    finish = "loop"
                    break
    except openai.APIConnectionError as exc:  # the client's name for a body cut off after the headers:
        cause = exc.__cause__ or exc  # the server answered, so a malformed answer, not one unreached
        raise ValueError(f"the stream broke off after {len(pieces)} pieces ({describe(cause)})") from None
    finally:
        await stream.close()  # on a loop: the server stops generating when the stream closes
    if not pieces and not finish:
        raise ValueError("the streamed answer held no chunk of a completion")
    if not finish:  # the connection closed mid-answer: a cut answer is no answer (retried, never stored)
        raise ValueError(f"the stream ended after {len(pieces)} pieces with no finish_reason (cut off)")
    return {
        "text": "".join(pieces),
        "prompt_tokens": _count(_field(usage, "prompt_tokens")) if finish != "loop" else 0,
        "completion_tokens": _count(_field(usage, "completion_tokens"))
        if usage and finish != "loop"
        else len(pieces),
        "finish_reason": finish,
    }


class RefusalError(ValueError):
    """A completion whose model refused (``message.refusal``, no content): no answer, and one a
    later call would most likely give again (so not a failure that may pass)."""


def _field(obj: Any, name: str) -> Any:
    """``obj.name`` or ``obj[name]``; None when it has neither (the client does not validate a
    body's fields: a server's odd JSON arrives as dicts, lists or strings)."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _count(value: Any) -> int:
    """A token count as sent, 0 where the server sent none or something else."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def completion_fields(resp: Any) -> dict[str, Any]:
    """Text, token counts and finish reason of a chat completion as the client parsed it; a
    ValueError saying what is wrong where the body is not one (retried as a malformed answer).
    ``content`` as a list of parts (some servers send ``[{"type": "text", "text": ...}]``) is
    their text joined. A null ``content`` (a refusal: :class:`RefusalError`), or a null or empty
    one beside ``reasoning_content`` (a reasoning parser kept the answer there), is no answer: a
    ValueError, never stored as an empty one."""
    choices = _field(resp, "choices")
    if not isinstance(choices, list) or not choices:
        error = _field(resp, "error")
        said = _field(error, "message") or error
        if said:  # a server that sends its error with status 200
            said = " ".join(str(said).split())
            raise ValueError(f"the server answered with an error, not a completion: {said}")
        raise ValueError(f"the answer is not a chat completion with choices (got {type(resp).__name__})")
    message = _field(choices[0], "message")
    content = _field(message, "content")
    if content is None and _field(message, "refusal"):
        said = " ".join(str(_field(message, "refusal")).split())[:120]
        raise RefusalError(f"message.content is null: the model refused ({said})")
    if content is None or (content == "" and _field(message, "reasoning_content")):
        why = ("its text in reasoning_content: turn the server's reasoning parser off"
               if _field(message, "reasoning_content") else "no text")  # fmt: skip
        raise ValueError(f"message.content is {'null' if content is None else 'empty'} ({why})")
    if isinstance(content, list):
        parts = [_field(part, "text") for part in content]
        if not all(isinstance(p, str) for p in parts):
            raise ValueError("message.content is a list whose parts are not all text")
        content = "".join(parts)
    elif content is not None and not isinstance(content, str):
        raise ValueError(f"message.content is a {type(content).__name__}, not text")
    usage = _field(resp, "usage")
    finish = _field(choices[0], "finish_reason")
    return {
        "text": content,
        "prompt_tokens": _count(_field(usage, "prompt_tokens")),
        "completion_tokens": _count(_field(usage, "completion_tokens")),
        "finish_reason": finish if isinstance(finish, str) else "",
    }


def describe(exc: BaseException) -> str:
    """``exc`` as a reason: its class and :func:`error_text`."""
    said = error_text(exc)
    if not said and isinstance(exc, _transport_errors()):
        said = "the connection broke while the answer was read"
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


def error_text(exc: BaseException) -> str:
    """``exc``'s message on one line. The client keeps only ``{"error": {"message": ...}}`` of
    an error status's body; a body in another form (``{"detail": ...}``, ``{"error": "..."}``,
    plain text, an HTML page, its tags, styles and scripts dropped) is added after its
    ``Error code: N``, so the server's own reason is not lost. Not yet cut or redacted."""
    import openai

    said = one_line(exc, None)
    if not isinstance(exc, openai.APIStatusError):
        return said
    body = exc.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str) and inner["message"]:
            return said  # the form the client reads: its message is in ``said`` already
        body = next((body[k] for k in ("error", "detail", "message") if isinstance(body.get(k), str)), body)
    text = body if isinstance(body, str) else json.dumps(body, default=str) if body is not None else ""
    if text.lstrip().startswith("<"):  # a page: its text, without its styles and scripts
        text = re.sub(r"<[^>]*>", " ", re.sub(r"(?is)<(script|style)\b.*?</\1\s*>", " ", text))
    text = " ".join(text.split())
    return f"{said} - {text}" if text and text != "{}" else said


def _transport_errors() -> tuple[type[Exception], ...]:
    """The HTTP library's own request errors (a connection dropped, or a body that cannot be
    decoded, while the body is read after the headers came): the openai client raises them
    unwrapped from a streamed response's body."""
    found: list[type[Exception]] = []
    for name in ("httpx", "httpx2"):  # the openai client's transport, whichever it uses
        try:
            found.append(importlib.import_module(name).RequestError)
        except (ImportError, AttributeError):
            continue
    return tuple(found)


#: the longest wait a server's Retry-After is taken to ask for (s); a longer ask is cut to it (the
#: wait itself is that or the backoff, whichever is longer, plus up to a quarter of jitter)
SERVER_WAIT_MAX_S = 60.0


def server_wait(headers: Mapping[str, str]) -> float | None:
    """The wait (s) a reply's ``retry-after-ms`` or ``Retry-After`` asks for: milliseconds, or
    seconds, or an HTTP date in any of RFC 9110's three forms (the wait is that date minus now,
    0 once it has passed); at most :data:`SERVER_WAIT_MAX_S`. None where neither header holds a
    finite, non-negative value: the caller's own backoff then (a bad header never means "ask
    again at once")."""
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            wait = float(raw) * scale
        except ValueError:
            if scale != 1.0:
                continue
            try:  # an HTTP date: IMF-fixdate, RFC 850 or asctime (which has no zone: GMT)
                when = parsedate_to_datetime(raw)
            except (TypeError, ValueError):
                continue
            if when.tzinfo is None:
                if "-0000" in raw:  # a zone said to be unknown: not guessed at
                    continue
                when = when.replace(tzinfo=UTC)
            wait = max(0.0, (when - datetime.now(UTC)).total_seconds())
        if math.isfinite(wait) and wait >= 0:
            return min(wait, SERVER_WAIT_MAX_S)
    return None


def retry_after(exc: Exception, retry: int, base: float | None = None) -> float | None:
    """Seconds to wait before retry ``retry`` (from 0) after ``exc``, or None when it is final;
    ``base``: the first retry's backoff (default :data:`BACKOFF_S`)."""
    import openai

    if isinstance(exc, RefusalError):
        return None  # the model's own answer: asked again at once it would refuse again
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if status not in RETRY_STATUS and status < 500:
            return None  # the request itself is wrong (400, 401, 403, 404, 422...)
        if status >= 500 and INVALID.search(error_text(exc)):
            return None  # a server that reports an invalid request as a 5xx
        asked = server_wait(exc.response.headers)
        if asked is not None:  # at least the server's wait; spread, and growing as ours does,
            return max(asked, _backoff(retry, base)) * (1 + random.random() / 4)  # so waiters part
    elif not isinstance(exc, (openai.OpenAIError, TimeoutError, ValueError, AttributeError, IndexError,
                              TypeError, *_transport_errors())):  # fmt: skip
        raise exc  # a bug, not a server's answer
    # connection errors and timeouts (ours included); a body that is not a completion (malformed JSON,
    # missing fields), as a server mid-restart may send
    return _backoff(retry, base)


def _backoff(retry: int, base: float | None = None) -> float:
    """Exponential backoff with jitter: half to all of ``base * 2**retry`` (``base`` default
    :data:`BACKOFF_S`, read at the call: tests shorten it), at most :data:`BACKOFF_MAX_S`."""
    first = BACKOFF_S if base is None else base
    return float(min(first * 2**retry, BACKOFF_MAX_S) * (0.5 + random.random() / 2))
