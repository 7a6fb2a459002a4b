"""A continuous-batching decode loop for a Hugging Face causal LM (CPU or GPU).

``Decoder(lm, ...).run(requests)`` answers a list of :class:`DecodeRequest` (prompt token
ids, ``max_tokens``, a :class:`~curll.llm.constrained.RowSpec`) with one :class:`Decoded`
each, in order. Why not ``model.generate``: a batch there lives until its longest row
ends, so one answer that loops to ``max_tokens`` keeps 15 finished rows decoding; and
every row pays for the shared system prompt again. Here:

- **Slots.** At most ``max_batch`` rows decode together. A row leaves the batch the step it
  finishes (stop token, closed grammar, ``max_tokens``, or a loop), and waiting requests
  take the free slots at once: their prompts are prefilled together and their KV rows
  are joined to the batch's cache.
- **Shared prefix.** The longest common token prefix of all prompts (a task's fixed
  system prompt) is run once; each admitted row starts from a copy of its keys and values.
- **Layout.** The cache holds (B, Hkv, T, d) per layer with rows left-padded to a common
  length T; the 2-D attention mask marks the padding, and every row carries its own
  position ids, so padding never shifts a row's positions. Columns that no row uses any
  more are cropped.
- **Loops.** A schema-constrained row whose last tokens repeat one span back to back
  (:func:`~curll.llm.loops.find_loop`) stops with ``finish_reason="loop"``: its
  JSON could only end at ``max_tokens`` unterminated.

Per-row sampling is independent of the batch (see :mod:`curll.llm.constrained`), so a
request's answer does not depend on the other requests, their order or ``max_batch``
(up to floating-point differences of batched matrix products).
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from curll.llm.constrained import RowSpec, RowState, apply_bitmask, sample_rows, stop_bitmask
from curll.llm.loops import LOOP_CHECK_EVERY, find_loop

MIN_PREFIX = 16  # a shared prefix shorter than this is not worth a separate forward pass
CROP_AT = 32  # crop the cache when at least this many leading columns are unused


@dataclass(frozen=True)
class DecodeRequest:
    prompt: tuple[int, ...]
    max_tokens: int
    spec: RowSpec
    stop_loops: bool = True


@dataclass(frozen=True)
class Decoded:
    tokens: list[int]  # generated ids, the stop token excluded
    finish_reason: str  # "stop" | "length" | "loop"
    loop_period: int = 0  # tokens in the repeated span when finish_reason is "loop"


@dataclass
class _Slot:
    index: int  # into the requests
    state: RowState
    pos: int  # position id of the next input token
    last: int = -1  # the token to feed next


class Decoder:
    def __init__(
        self,
        lm: Any,
        *,
        vocab_size: int,
        stop_ids: Sequence[int],
        device: str,
        max_batch: int,
        pad_id: int = 0,
    ) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be >= 1")
        self.lm = lm
        self.vocab_size = vocab_size
        self.device = device
        self.max_batch = max_batch
        self.pad_id = pad_id
        self.stop_ids = list(stop_ids)
        self.stop_words = stop_bitmask(self.stop_ids, (vocab_size + 31) // 32)
        self._keep_last = "logits_to_keep" in inspect.signature(lm.forward).parameters
        self.forward_passes = 0

    # -- the loop -------------------------------------------------------------------------

    def run(
        self, requests: Sequence[DecodeRequest], on_done: Callable[[int, Decoded], object] | None = None
    ) -> list[Decoded]:
        """Decode ``requests`` (continuous batching); one :class:`Decoded` each, in order.
        ``on_done(index, decoded)`` is called as each row finishes (rows finish out of order)."""
        out: list[Decoded | None] = [None] * len(requests)
        prefix = self._prefix([r.prompt for r in requests])
        prefix_kv = self._prefill_prefix(prefix) if prefix else None
        queue = deque(range(len(requests)))
        cache: Any = None
        mask = torch.zeros(0, 0, dtype=torch.long, device=self.device)
        slots: list[_Slot] = []
        with torch.inference_mode():
            while queue or slots:
                start = 0  # the slots that sampled a token in this iteration: slots[start:]
                if queue and len(slots) < self.max_batch:
                    take = [queue.popleft() for _ in range(min(self.max_batch - len(slots), len(queue)))]
                    new, new_cache, new_mask, logits = self._admit(requests, take, len(prefix), prefix_kv)
                    cache, mask = _join(cache, mask, new_cache, new_mask)
                    start = len(slots)
                    slots += new
                else:
                    logits, mask = self._step(slots, cache, mask)
                self._sample(logits, slots[start:])
                keep = list(range(start))
                for i in range(start, len(slots)):
                    s = slots[i]
                    done = self._finished(s, requests[s.index])
                    if done is None:
                        keep.append(i)
                    else:
                        out[s.index] = done
                        if on_done is not None:
                            on_done(s.index, done)
                if len(keep) < len(slots):
                    slots = [slots[i] for i in keep]
                    if slots:
                        idx = torch.tensor(keep, dtype=torch.long, device=self.device)
                        cache.batch_select_indices(idx)
                        mask = mask[idx]
                        cache, mask = _crop(cache, mask)
                    else:
                        cache, mask = None, mask[:0, :0]
        return [d for d in out if d is not None]

    # -- pieces -----------------------------------------------------------------------------

    @staticmethod
    def _prefix(prompts: Sequence[Sequence[int]]) -> tuple[int, ...]:
        """The longest common prefix, leaving every prompt at least one token of its own."""
        if len(prompts) < 2:
            return ()
        first, n = prompts[0], min(len(p) for p in prompts) - 1
        k = 0
        while k < n and all(p[k] == first[k] for p in prompts):
            k += 1
        return tuple(first[:k]) if k >= MIN_PREFIX else ()

    def _forward(self, ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor, cache: Any) -> torch.Tensor:
        kwargs: dict[str, Any] = {"logits_to_keep": 1} if self._keep_last else {}
        out = self.lm(
            input_ids=ids,
            attention_mask=mask,
            position_ids=pos,
            past_key_values=cache,
            use_cache=True,
            **kwargs,
        )
        self.forward_passes += 1
        logits: torch.Tensor = out.logits[:, -1, :].float()  # (B, V)
        return logits

    def _prefill_prefix(self, prefix: tuple[int, ...]) -> list[tuple[torch.Tensor, torch.Tensor]]:
        from transformers import DynamicCache

        cache = DynamicCache()
        ids = torch.tensor([prefix], dtype=torch.long, device=self.device)
        with torch.inference_mode():
            self._forward(
                ids, torch.ones_like(ids), torch.arange(len(prefix), device=self.device)[None], cache
            )
        return [(layer.keys, layer.values) for layer in cache.layers]  # type: ignore[misc]

    def _admit(
        self,
        requests: Sequence[DecodeRequest],
        take: list[int],
        p: int,
        prefix_kv: list[tuple[torch.Tensor, torch.Tensor]] | None,
    ) -> tuple[list[_Slot], Any, torch.Tensor, torch.Tensor]:
        """Prefill the prompts of ``take`` (after the shared prefix) in one forward pass."""
        from transformers import DynamicCache

        k = len(take)
        suffixes = [requests[i].prompt[p:] for i in take]
        width = max(len(s) for s in suffixes)
        ids = torch.full((k, width), self.pad_id, dtype=torch.long)
        own = torch.zeros(k, width, dtype=torch.long)
        for r, s in enumerate(suffixes):
            ids[r, width - len(s) :] = torch.tensor(s, dtype=torch.long)
            own[r, width - len(s) :] = 1
        pos = (p + own.cumsum(1) - 1).clamp(min=p)  # pad positions are masked: any value will do
        mask = torch.cat([torch.ones(k, p, dtype=torch.long), own], dim=1)
        if prefix_kv is None:
            cache = DynamicCache()
        else:
            cache = DynamicCache(
                [(kk.expand(k, -1, -1, -1), vv.expand(k, -1, -1, -1)) for kk, vv in prefix_kv]
            )
        dev = self.device
        logits = self._forward(ids.to(dev), mask.to(dev), pos.to(dev), cache)
        slots = [
            _Slot(i, RowState(requests[i].spec, requests[i].prompt, self.vocab_size, self.stop_words, dev),
                  pos=len(requests[i].prompt))
            for i in take
        ]  # fmt: skip
        return slots, cache, mask.to(dev), logits

    def _step(self, slots: list[_Slot], cache: Any, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        dev = self.device
        ids = torch.tensor([[s.last] for s in slots], dtype=torch.long, device=dev)
        pos = torch.tensor([[s.pos] for s in slots], dtype=torch.long, device=dev)
        mask = torch.cat([mask, torch.ones(len(slots), 1, dtype=mask.dtype, device=dev)], dim=1)
        logits = self._forward(ids, mask, pos, cache)
        for s in slots:
            s.pos += 1
        return logits, mask

    def _sample(self, logits: torch.Tensor, slots: list[_Slot]) -> None:
        """Pick each slot's next token (in ``last``); grammar masks first, then the row's sampler."""
        rows = [i for i, s in enumerate(slots) if s.state.constrained]
        if rows:
            apply_bitmask(logits, torch.cat([slots[i].state.bitmask for i in rows]), rows)
        for s, token in zip(slots, sample_rows(logits, [s.state for s in slots]), strict=True):
            s.last = token

    def _finished(self, s: _Slot, req: DecodeRequest) -> Decoded | None:
        """Accept the slot's new token; a Decoded when the row is done, else None."""
        st = s.state
        if st.accept(s.last):
            return Decoded(list(st.tokens), "stop")
        if len(st.tokens) >= req.max_tokens:
            return Decoded(list(st.tokens), "length")
        if req.stop_loops and st.constrained and len(st.tokens) % LOOP_CHECK_EVERY == 0:
            period = find_loop(st.tokens)
            if period:
                return Decoded(list(st.tokens), "loop", period)
        return None


def _pad_left(cache: Any, mask: torch.Tensor, n: int) -> torch.Tensor:
    """Prepend ``n`` unused (masked) columns to every layer of ``cache`` and to ``mask``."""
    if n <= 0:
        return mask
    for layer in cache.layers:
        layer.keys = torch.nn.functional.pad(layer.keys, (0, 0, n, 0))
        layer.values = torch.nn.functional.pad(layer.values, (0, 0, n, 0))
    return torch.nn.functional.pad(mask, (n, 0))


def _join(cache: Any, mask: torch.Tensor, new: Any, new_mask: torch.Tensor) -> tuple[Any, torch.Tensor]:
    """The batch's cache and mask with the new rows appended (both left-padded to one length)."""
    if cache is None:
        return new, new_mask
    t, tn = mask.shape[1], new_mask.shape[1]
    mask = _pad_left(cache, mask, tn - t)
    new_mask = _pad_left(new, new_mask, t - tn)
    for a, b in zip(cache.layers, new.layers, strict=True):
        a.keys = torch.cat([a.keys, b.keys], dim=0)
        a.values = torch.cat([a.values, b.values], dim=0)
    return cache, torch.cat([mask, new_mask], dim=0)


def _crop(cache: Any, mask: torch.Tensor) -> tuple[Any, torch.Tensor]:
    """Drop leading columns that no live row attends to any more."""
    used = mask.any(dim=0)
    first = int(used.int().argmax()) if bool(used.any()) else 0
    if first < CROP_AT:
        return cache, mask
    for layer in cache.layers:
        layer.keys = layer.keys[:, :, first:]
        layer.values = layer.values[:, :, first:]
    return cache, mask[:, first:]
