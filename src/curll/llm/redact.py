"""What of a server's key and address may be written: nothing secret.

- :func:`redact`: a server's error text with the API key, any ``Authorization``/``Bearer``
  value and any ``sk-`` token replaced by ``***`` (servers echo keys in their errors).
- :func:`server_of`: a base URL without user and password, the form that names a server
  on rows and in cache keys.
"""

from __future__ import annotations

import re

#: secrets a server may echo in an error: bearer tokens, Authorization values, OpenAI-style keys
_SECRETS = re.compile(
    r"(?i)((?:authorization[\"']?\s*[:=]\s*[\"']?)?(?:bearer|basic|token)\s+|authorization[\"']?\s*[:=]\s*[\"']?)"
    r"[^\s\"',}]+|\bsk-[A-Za-z0-9_\-*]{6,}"
)


def redact(text: str, key: str | None = None) -> str:
    """``text`` with ``key`` (when it is a real one) and any token that looks like a secret
    replaced by ``***``."""
    text = without_key(text, key)
    return _SECRETS.sub(lambda m: (m.group(1) or "") + "***", text)


def without_key(text: str, key: str | None) -> str:
    """``text`` with ``key`` (when it is a real one) replaced by ``***``, and nothing else: a
    model's answer, where a server that echoes the key would otherwise write it to the cache and
    the tables (the broader :func:`redact` is for error messages)."""
    if key and key != "EMPTY" and len(key) >= 4:
        return text.replace(key, "***")
    return text


def server_of(base_url: str) -> str:
    """``base_url`` without user and password (``http://u:p@host:8000/v1`` -> ``http://host:8000/v1``;
    an IPv6 host keeps its brackets: ``http://[::1]:8000/v1``)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(base_url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
