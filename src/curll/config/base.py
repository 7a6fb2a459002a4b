"""Shared building blocks of the params sections.

- Shared value types: :data:`Seed` (every seed: ``0 <= seed <= 2**32 - 1``, what numpy and
  torch accept), :data:`Count`, :data:`Positive`, :data:`Share`, ...
- :func:`no_credentials`: a URL-valued param must hold no credential (user info or a key-like
  query parameter): DVC copies every param into ``dvc.lock``, its run cache and the dataset card.
- :class:`ByProfile`: one setting overridden per LLM profile (verify's passage lengths and
  content checks, the templates' dictionary check).
- :class:`Registered`: a name that must be in a registry of specs (an order of
  :mod:`curll.orders`, an instance type of :mod:`curll.instances`), read when the params load,
  so a spec registered at run time is known; :class:`KeysOf`: a mapping with one entry for
  every name of a registry (a prompt per instance type).
- :class:`TablesFolder`: a stage's folder of per-type tables, ``<type>.parquet`` each.
- :class:`ParamsError`: what a validator raises to name the exact key at fault (relative to its
  section) and say what is wrong without repeating the section's input.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Generic, TypeVar
from urllib.parse import unquote_plus

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr

from curll.schemas import MAX_STAGE

Stage = Annotated[StrictInt, Field(ge=0, le=MAX_STAGE)]
# lists in YAML become tuples (hashable, immutable); elements stay strict
Stages = Annotated[tuple[Stage, ...], Field(min_length=1, strict=False)]
PathStr = Annotated[StrictStr, Field(min_length=1)]
Count = Annotated[StrictInt, Field(ge=0)]
Positive = Annotated[StrictInt, Field(ge=1)]
#: every seed of the params: numpy's and torch's range (a negative seed crashed them mid-stage)
Seed = Annotated[StrictInt, Field(ge=0, le=2**32 - 1)]
# YAML writes 1 for 1.0: accept ints where a float is meant, never strings
Number = StrictFloat | StrictInt
Share = Annotated[Number, Field(ge=0, le=1)]
#: the least share a stage must keep: one number for every type, or {type: share} (missing: 0)
MinYield = Share | dict[StrictStr, Share]


class Section(BaseModel):
    """A frozen params section: unknown keys, wrong types and infinite or NaN numbers are errors."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)


T = TypeVar("T")


class ByProfile(Section, Generic[T]):
    """A setting with ``default`` and ``by_profile`` overrides, keyed by ``llm.profiles`` name (a
    key that names no profile is refused when the params load: it would never apply)."""

    default: T
    by_profile: dict[StrictStr, T] = Field(default_factory=dict)

    def for_profile(self, name: str) -> T:
        return self.by_profile.get(name, self.default)


@dataclass(frozen=True)
class Registered:
    """Metadata of a name that must be a key of a registry: ``what`` names the registry in
    messages and docs, ``names`` reads its keys at the time of the check."""

    what: str
    names: Callable[[], tuple[str, ...]]

    def check(self, name: str) -> str:
        if name not in self.names():
            raise ValueError(f"unknown {self.what} {name!r} (known: {', '.join(self.names())})")
        return name


@dataclass(frozen=True)
class KeysOf:
    """Metadata of a mapping whose keys must be exactly ``names()`` (read at the time of the
    check): one entry for every name of a registry, no other. ``what`` names them in messages
    and docs."""

    what: str
    names: Callable[[], tuple[str, ...]]

    def check(self, value: dict[str, T]) -> dict[str, T]:
        known = self.names()
        unknown = [k for k in value if k not in known]
        if unknown:
            raise ValueError(f"unknown {self.what} {unknown[0]!r} (known: {', '.join(known)})")
        missing = [k for k in known if k not in value]
        if missing:
            raise ValueError(f"no entry for the {self.what} {missing[0]!r} (every one needs one)")
        return {k: value[k] for k in known}  # in the registry's order


@dataclass(frozen=True)
class YieldKeys:
    """A ``min_yield`` mapping's keys must be among ``names()``, what the stage measures (``what``
    names them): a key that names nothing would never apply, its floor silently 0."""

    what: str
    names: Callable[[], tuple[str, ...]]

    def check(self, value: MinYield) -> MinYield:
        if isinstance(value, dict):
            known = self.names()
            unknown = [k for k in value if k not in known]
            if unknown:
                raise ValueError(f"unknown {self.what} {unknown[0]!r} (known: {', '.join(known)})")
        return value


class TablesFolder(Section):
    """Outputs with a folder of per-type tables: ``tables/<type>.parquet`` for every instance type."""

    tables: PathStr = Field(description="a folder: <type>.parquet for every instance type")

    def table(self, kind: str) -> str:
        """The path of instance type ``kind``'s table."""
        return f"{self.tables}/{kind}.parquet"


class ParamsError(ValueError):
    """Raised by a validator: ``(key, message)`` pairs, each key dotted and relative to where the
    validator runs (``""``: that field or section itself; ``"judges.1"``: its second judge).
    The params loader shows each message as written, never with the offending input (which may
    be a whole section, or a secret)."""

    def __init__(self, *problems: tuple[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {m}" if k else m for k, m in problems))
        self.problems = problems


def unique_sorted(stages: tuple[int, ...]) -> tuple[int, ...]:
    if len(set(stages)) != len(stages):
        raise ValueError("stages must not repeat")
    return tuple(sorted(stages))


#: words that make a parameter's name a credential wherever they stand (``X-Amz-Signature``)
_SECRET_WORDS = frozenset(
    {"apikey", "accesstoken", "secret", "password", "passwd", "pwd", "sig", "signature", "auth",
     "authorization", "credential", "credentials"}
)  # fmt: skip
#: ``key`` and ``token`` name a credential (``hf_token``, ``openai_api_key``, ``X-Amz-Security-Token``)
#: unless a word beside them says what else they are (``sort_key``, ``page_token``, ``next_token``)
_KEY_WORDS = frozenset({"key", "token"})
_NOT_SECRET = frozenset(
    {"sort", "page", "next", "prev", "previous", "cursor", "continuation", "partition", "primary",
     "foreign", "row", "range", "cache", "idempotency", "sync", "resume", "start", "end", "last",
     "first", "max", "min", "limit", "count", "order", "group", "shard", "hash", "sequence", "etag",
     "pagination", "search", "lookup", "skip"}
)  # fmt: skip


def _words(name: str) -> tuple[set[str], str]:
    """``apiKey``, ``api_key``, ``API-KEY`` -> ({"api", "key"}, "apikey"): the words and the whole."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", unquote_plus(name)).lower()
    return {w for w in re.split(r"[^a-z0-9]+", spaced) if w}, re.sub(r"[^a-z0-9]", "", spaced)


def _secret_name(name: str) -> bool:
    words, whole = _words(name)
    if (words | {whole}) & _SECRET_WORDS:
        return True
    return bool(words & _KEY_WORDS) and not words & _NOT_SECRET


def url_credential(url: str) -> str | None:
    """What in ``url`` is a credential, in words that do not repeat it; None when nothing is.

    User info (``user:password@`` or ``user@`` before the host, with a scheme, without one, or
    after a bare ``//``) and a query or fragment parameter named like a credential (``key``,
    ``api_key``, ``token``, ``access_token``, ``secret``, ``password``, ``sig``, ``signature``,
    ...; any case; ``sort_key`` or ``page_token`` are not) are credentials.
    """
    scheme = re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", url)
    rest = url[scheme.end() :] if scheme else url.removeprefix("//")
    if "@" in re.split(r"[/?#]", rest, maxsplit=1)[0]:
        return "user info (user:password@ or user@ before the host)"
    query, _, fragment = rest.partition("#")
    for part, where in ((query.partition("?")[2], "query"), (fragment, "fragment")):
        for pair in re.split(r"[&;]", part):
            if "=" in pair and _secret_name(pair.split("=", 1)[0]):
                return f"a key-like {where} parameter"
    return None


def http_url(url: str) -> str:
    """An after-validator: ``url`` is an ``http(s)://host[:port]/...`` URL, with no white space
    around it and a port in range (``urllib`` would refuse it only at the first request)."""
    from urllib.parse import urlsplit

    if url != url.strip():
        raise ParamsError(("", "has white space around it"))
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
        raise ParamsError(("", "is not an http:// or https:// URL with a host and a valid port"))
    return url


def no_credentials(hint: str) -> Callable[[str | None], str | None]:
    """An after-validator refusing a URL that holds a credential; ``hint`` says where it goes."""

    def check(url: str | None) -> str | None:
        found = None if url is None else url_credential(url)
        if found is not None:
            raise ParamsError(("", f"the URL holds {found}, a credential that DVC would copy into "
                                   f"dvc.lock, its run cache and the dataset card: {hint}"))  # fmt: skip
        return url

    return check
