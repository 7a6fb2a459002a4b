"""Loop detection for answers being decoded, shared by the backends that stop loops early.

A very small model often falls into a loop ("so cute and adorable. They're so cute and
adorable. ...") that would run to ``max_tokens``; a JSON answer caught in one can never
close in time. The transformers backend checks its token ids, the openai backend (when
it streams) the text pieces the server sends, one per token: either way a loop is the
same unit repeated back to back.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

LOOP_CHECK_EVERY = 8  # tokens between loop checks of an answer (a check costs ~1 us per period tried)


def find_loop(
    tokens: Sequence[Hashable], *, min_span: int = 48, repeats: int = 3, max_period: int = 96
) -> int:
    """The period p of a loop at the end of ``tokens`` (the last p tokens repeated back to back,
    at least ``repeats`` times and over at least ``min_span`` tokens), or 0 when there is none."""
    n = len(tokens)
    for p in range(1, max_period + 1):
        r = max(repeats, -(-min_span // p))
        if p * r > n:
            break
        tail = list(tokens[n - p :])
        if list(tokens[n - p * r :]) == tail * r:
            return p
    return 0
