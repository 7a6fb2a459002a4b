"""Run a training order: data per run, init (scratch or previous run), train, save, metrics.

Contract of :func:`run_order`: for each run of :func:`curll.train.orders.plan` (for every
seed in ``train.seeds`` and every order in ``train.order``) it packs the train records of the
run's stages (documents shuffled with the run's seed), builds the model
(:func:`curll.train.orders.untrained_model` of the run's seed, then for an order that starts
from the previous run that run's final weights), trains it (:func:`curll.train.trainer.train`,
checkpoints under ``<out.checkpoints>/<key>/<run name>.pt`` with the key of
:func:`checkpoint_key`), and saves it in Hugging Face format under ``models/<run name>``
(``models/seed-42/continual/0-1``). Its rows and steps are :class:`Budget`'s: under
``train.budget: data`` one pack of the run's stages (a cumulative run's rows, joint's, mix them)
and ``epochs`` seeded passes over it; under ``steps`` one pack per stage and S_k steps of each.
Returns per-run metrics (``compute``: :func:`~curll.train.orders.spent` and, with the runs it
continues, ``cumulative``) and the per-step log. Under DDP every rank calls
it; only rank 0 writes checkpoints and models, and the others wait for it before the next run.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from curll.chat import CUT
from curll.config.train import TrainParams
from curll.errors import CurllError
from curll.model.hf import save_hf
from curll.model.llama import CausalLM
from curll.orders import spec
from curll.train import distributed, strategies
from curll.train.data import Doc, Packed, Parts, encode, fit, pack
from curll.train.ewc import Memory, importances
from curll.train.orders import Run, budget_order, cumulative, plan, spent, stage_steps, untrained_model
from curll.train.records import RecordFile
from curll.train.trainer import Settings, epoch_order, eval_loss, train


def settings(p: TrainParams, seed: int | None = None, order: str | None = None) -> Settings:
    """The trainer's settings; ``seed``: the run's (default: the first of ``train.seeds``);
    ``order``: the run's, whose strategy may set its own schedule (:func:`strategies.optim_of`)."""
    cuda = torch.cuda.is_available()
    device = "cuda" if p.device == "cuda" or (p.device == "auto" and cuda) else "cpu"
    bf16 = p.dtype == "bf16" or (p.dtype == "auto" and device == "cuda" and torch.cuda.is_bf16_supported())
    return Settings(
        batch=p.batch, micro_batch=p.micro_batch, epochs=p.epochs, seed=p.seeds[0] if seed is None else seed,
        checkpoint_every=p.checkpoint_every, log_every=p.log_every,
        optim=p.optim if order is None else strategies.optim_of(order, p),
        device=device, dtype=torch.bfloat16 if bf16 else torch.float32, compile=p.compile,
        loss_chunk=p.loss_chunk,
    )  # fmt: skip


#: Dense peak TFLOP/s per GPU by name fragment (vendor datasheets; bf16 without sparsity).
PEAK_BF16_TFLOPS = {"H200": 989.0, "H100": 989.0, "A100": 312.0, "L40S": 362.0, "A10G": 125.0, "4090": 165.0}


def mfu(flops_per_s: float, device: str, dtype: torch.dtype) -> float | None:
    """Model FLOPs utilisation: achieved / peak FLOP/s on a known GPU in bf16; None elsewhere
    (CPUs and unknown GPUs have no peak in the table). ``flops_per_s``: one GPU's share."""
    if not device.startswith("cuda") or dtype != torch.bfloat16:
        return None
    name = torch.cuda.get_device_name()
    peak = next((v for k, v in PEAK_BF16_TFLOPS.items() if k in name), None)
    return round(flops_per_s / (peak * 1e12), 4) if peak else None


#: the packages whose source makes a checkpoint: training (packing, trainer...) and the model
CODE = ("model", "train")


def code_digest() -> str:
    """A hash of the source of :data:`CODE` (``curll.model`` and ``curll.train``): checkpoints
    of other code are never resumed."""
    digest = hashlib.sha256()
    src = Path(__file__).parents[1]  # src/curll
    for path in sorted(f for package in CODE for f in (src / package).glob("*.py")):
        digest.update(path.relative_to(src).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def checkpoint_key(records: RecordFile, tok: Any, p: TrainParams) -> str:
    """16 hex digits of the params, the train records (ids and messages), the tokenizer and the
    training code: a killed run resumes from checkpoints under this key, and any change (a
    fixed bug in the trainer included) starts afresh. ``seeds`` is left out: a run's name holds
    its seed, so adding a seed keeps the checkpoints of the others."""
    backend = getattr(tok, "backend_tokenizer", None)  # a fast tokenizer: vocabulary and merges
    vocab = backend.to_str() if backend is not None else json.dumps(tok.get_vocab(), sort_keys=True)
    digest = hashlib.sha256(json.dumps(p.model_dump(mode="json", exclude={"seeds"}), sort_keys=True).encode())
    digest.update(records.digest().encode())
    digest.update(vocab.encode())
    digest.update(code_digest().encode())
    return digest.hexdigest()[:16]


#: records tokenised per call of the tokenizer
ENCODE_BATCH = 1024


def _encoded(texts: Iterator[str], chars: list[int], tok: Any, p: TrainParams) -> Iterator[Doc]:
    chunk: list[str] = []
    done = 0
    for text in texts:
        chunk.append(text)
        if len(chunk) == ENCODE_BATCH:
            yield from encode(chunk, tok, loss=p.loss, passage_chars=chars[done : done + len(chunk)])
            done, chunk = done + len(chunk), []
    if chunk:
        yield from encode(chunk, tok, loss=p.loss, passage_chars=chars[done:])


def _pack(records: RecordFile, picked: pd.DataFrame, order: np.ndarray, p: TrainParams, tok: Any) -> Packed:
    """Pack the records ``picked`` (rows of ``records.meta``) in ``order`` (indices into
    ``picked``): read and tokenised in file order, a batch at a time."""
    unique, inverse = np.unique(picked["position"].to_numpy(), return_inverse=True)  # file order
    cut = tok(CUT, add_special_tokens=False)["input_ids"]
    docs = _encoded(records.messages(unique), records.passage_chars(unique), tok, p)
    return pack(docs, p.context, pad_id=tok.pad_token_id, cut_ids=cut, order=inverse[order])


def pack_run(records: RecordFile, run: Run, p: TrainParams, tok: Any) -> Packed:
    """The run's training data: the records of its stages (plus, for a run with replay stages,
    a seeded sample of the earlier stages': ``replay`` x its own records, rounded, at least one),
    shuffled with the run's seed."""
    rng = np.random.default_rng(run.seed)
    meta = records.meta
    own = meta[meta["stage"].isin(run.data_stages)]
    if run.replay_stages:
        old = meta[meta["stage"].isin(run.replay_stages)]
        # the share of the run's own records, halves rounded up, and at least one: a positive
        # share replays something on the smallest stage too (round() gave 0 for 0.1 x 4)
        share = Fraction(str(strategies.replay_share(run.order, p)))  # exact: 0.29 x 50 is 14.5
        take = min(len(old), max(1, math.floor(share * len(own) + Fraction(1, 2))))
        own = pd.concat([own, old.iloc[np.sort(rng.choice(len(old), size=take, replace=False))]])
    return _pack(records, own, rng.permutation(len(own)), p, tok)


def _held_out(validation: RecordFile, run: Run, p: TrainParams, tok: Any) -> tuple[Packed, str]:
    """The validation records of the run's own stages (else of every stage, when its stages have
    none), packed like its training data, and which of the two it is."""
    meta = validation.meta
    own = meta[meta["stage"].isin(run.data_stages)]
    scope, rows = ("own stages", own) if len(own) else ("all stages", meta)
    return _pack(validation, rows, np.arange(len(rows)), p, tok), scope


class Finished:
    """What later runs start from, and nothing else: the final weights (host copies) of a run
    that a later run names in ``init_from``, with its optimizer state when its order carries it
    (:func:`strategies.carries_optimizer`) and its EWC memory (:mod:`curll.train.ewc`) when its
    order adds EWC. An entry is dropped once read, so a sequential order holds one at a time and
    an order from scratch none."""

    def __init__(self, runs: list[Run], p: TrainParams) -> None:
        self.wanted = {r.init_from for r in runs if r.init_from is not None}
        self.p = p
        self.held: dict[str, Start] = {}

    def put(
        self, run: Run, model: CausalLM, optimizer_state: dict[str, Any] | None, memory: Memory | None
    ) -> None:
        if run.name in self.wanted:
            weights = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
            carried = optimizer_state if strategies.carries_optimizer(run.order, self.p) else None
            self.held[run.name] = Start(weights, carried, memory)

    def take(self, name: str) -> Start:
        return self.held.pop(name)


@dataclasses.dataclass(frozen=True)
class Start:
    """A run's start from the previous one: its weights, optimizer state and EWC memory."""

    weights: dict[str, torch.Tensor]
    optimizer: dict[str, Any] | None = None
    memory: Memory | None = None


def check_stages(records: RecordFile, p: TrainParams, tok: Any) -> None:
    """Before any run trains: every stage of ``train.stages`` has a train record, and one that
    fits ``train.context`` (its passage cut where it has one); a CurllError naming the key
    otherwise. Records are tokenised only until one fits, a batch at a time."""
    meta, cut = records.meta, tok(CUT, add_special_tokens=False)["input_ids"]
    for k in p.stages:
        rows = np.sort(meta.loc[meta["stage"] == k, "position"].to_numpy())
        if not len(rows):
            raise CurllError(f"split.out.records holds no train record of stage {k}; with split.source "
                             "import, download that stage's train repositories, or leave the stage out",
                             field="train.stages")  # fmt: skip
        docs = _encoded(records.messages(rows), records.passage_chars(rows), tok, p)
        if not any(fit(doc, p.context, cut) is not None for doc in docs):
            raise CurllError(f"none of the {len(rows)} train records of stage {k} fits in train.context="
                             f"{p.context} tokens, even with its passage cut; raise train.context",
                             field="train.context")  # fmt: skip


class Budget:
    """Per run of ``runs``: its data, steps, row order and span of the learning-rate schedule.

    ``data``: a run's rows as one part (``budget: data``; with replay: its stage and the replay
    rows) or one part per stage (``budget: steps``, a cumulative order such as joint: stage j
    packed alone, as the reference order's run packs it); its steps per part:
    ceil(``epochs`` x rows / ``batch``), or S_k
    (:func:`~curll.train.orders.stage_steps`, from the rows of each stage packed alone).
    ``order``: :func:`~curll.train.trainer.epoch_order` of the run's seed, or
    :func:`~curll.train.orders.budget_order`. ``lr_span``: None (the run's own schedule) except
    for the runs of an order that carries its ``schedule``, with ``optim.rewarm: false``: (steps
    of the seed's earlier runs of that order, steps of all of them)."""

    def __init__(self, records: RecordFile, tok: Any, p: TrainParams, runs: list[Run]) -> None:
        check_stages(records, p, tok)  # every run's parts then hold a record that fits
        self.records, self.tok, self.p, self.runs = records, tok, p, runs
        self.held: dict[str, tuple[Parts, list[int]]] = {}  # packed ahead (for lr_span)
        self.steps_of: dict[int, int] = {}
        if p.budget == "steps":
            meta = records.meta
            rows = {} if p.steps_per_stage else {  # best-fit's row count does not depend on the order
                k: _pack(records, own, np.arange(len(own)), p, tok).rows
                for k in p.stages for own in [meta[meta["stage"] == k]]
            }  # fmt: skip
            self.steps_of = stage_steps(p, rows)
        self.planned: dict[str, int] = {}  # steps of the runs packed so far

    def data(self, run: Run) -> tuple[Parts, list[int]]:
        return self.held.pop(run.name) if run.name in self.held else self._build(run)

    def _per_stage(self, run: Run) -> bool:
        """Under ``budget: steps`` a cumulative run is one part per stage."""
        return self.p.budget == "steps" and spec(run.order).data == "cumulative"

    def _stages(self, run: Run) -> tuple[int, ...]:
        """The stages of the run's parts (a part of a run with replay holds its replay too)."""
        return run.data_stages if self._per_stage(run) else (run.trained_to,)

    def _build(self, run: Run) -> tuple[Parts, list[int]]:
        p, records, tok = self.p, self.records, self.tok
        if self._per_stage(run):
            singles = [dataclasses.replace(run, data_stages=(k,)) for k in run.data_stages]
            parts = [pack_run(records, r, p, tok) for r in singles]
            labels = [str(k) for k in run.data_stages]
        else:
            parts, labels = [pack_run(records, run, p, tok)], ["-".join(map(str, run.data_stages))]
        if p.budget == "steps":
            steps = [self.steps_of[k] for k in self._stages(run)]
        else:
            steps = [-(-p.epochs * parts[0].rows // p.batch)]
        self.planned[run.name] = sum(steps)
        return Parts(parts, labels), steps

    def order(self, run: Run, data: Parts, steps: list[int]) -> np.ndarray:
        if self.p.budget == "data":
            return epoch_order(data.rows, self.p.epochs, run.seed)
        starts = data.starts.tolist()
        return budget_order(starts, steps, self._stages(run), batch=self.p.batch, seed=run.seed)

    def _steps(self, run: Run) -> int:
        """The run's steps; under ``budget: data`` a run not yet packed is packed now and held."""
        if self.p.budget == "steps":
            return sum(self.steps_of[k] for k in self._stages(run))
        if run.name not in self.planned:
            self.held[run.name] = self._build(run)
        return self.planned[run.name]

    def lr_span(self, run: Run) -> tuple[int, int] | None:
        if not strategies.one_schedule(run.order, self.p):
            return None
        chain = [r for r in self.runs if r.order == run.order and r.seed == run.seed]
        steps = [self._steps(r) for r in chain]
        at = chain.index(run)
        return sum(steps[:at]), sum(steps)


def run_order(
    records: RecordFile, tok: Any, p: TrainParams, validation: RecordFile | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``records``: the train split; ``validation``: the validation split,
    on which each run's model and an untrained model of the preset are scored (``val_loss``,
    ``val_loss_untrained``: nats per trained token on the run's own stages, or on all stages
    when its own have no validation record: ``val_scope``). Returns
    (metrics by run, step log)."""
    models, ckpts = Path(p.out.models), Path(p.out.checkpoints) / checkpoint_key(records, tok, p)
    metrics: dict[str, Any] = {}
    log: list[dict[str, Any]] = []
    todo = [r for seed in p.seeds for order in p.orders
            for r in plan(order, p.stages, seed=seed, replay=strategies.replay_share(order, p))]  # fmt: skip
    finished = Finished(todo, p)
    budget = Budget(records, tok, p, todo)
    for run in todo:
        data, part_steps = budget.data(run)
        order = budget.order(run, data, part_steps)
        s = settings(p, run.seed, run.order)
        model = untrained_model(p, len(tok), run.seed)
        start = Start({}) if run.init_from is None else finished.take(run.init_from)
        if run.init_from is not None:
            model.load_state_dict(start.weights)
        memory = start.memory or Memory(strategies.ewc_strength(run.order, p))
        ckpt = ckpts / f"{run.name}.pt"
        ckpt.parent.mkdir(parents=True, exist_ok=True)
        out = train(model, data, s, ckpt=ckpt, optimizer_state=start.optimizer, desc=f"train {run.name}",
                    order=order, lr_span=budget.lr_span(run), penalty=memory.penalty(s.device))  # fmt: skip
        if distributed.current().main:
            save_hf(model, tok, models / run.name)  # copies to the host; the live model stays
        distributed.barrier()
        if memory.strength:  # this stage's Fisher, for the later stages of its sequence
            fisher = importances(model, data, batch=s.batch, micro_batch=s.micro_batch, device=s.device,
                                 loss_chunk=s.loss_chunk)  # fmt: skip
            memory = memory.add(fisher, model)
        finished.put(run, model, out.optimizer_state, memory if memory.strength else None)
        final = out.log[-1]["loss"] if out.log else None
        held: dict[str, Any] = {}
        if validation is not None and len(validation):
            val, scope = _held_out(validation, run, p, tok)
            untrained = untrained_model(p, len(tok), run.seed)
            score = functools.partial(eval_loss, device=s.device, micro_batch=s.micro_batch,
                                      loss_chunk=s.loss_chunk)  # fmt: skip
            held = {"val_loss": score(model, val), "val_loss_untrained": score(untrained, val),
                    "val_rows": val.rows, "val_scope": scope}  # fmt: skip
        flops = model.config.train_flops(model.num_parameters(), p.context, out.tokens, out.trained)
        compute = spent(data, order, part_steps)
        before = metrics[run.init_from]["compute"]["cumulative"] if run.init_from else None
        packed = data.stats()  # its "tokens": those of one pass over the rows
        metrics[run.name] = {
            "seed": run.seed, "trained_to": run.trained_to, "steps": out.steps, "tokens": out.tokens,
            "tokens_per_s": round(out.tokens_per_s, 1), "final_loss": final, **held,
            "parameters": model.num_parameters(), **{k: v for k, v in packed.items() if k != "tokens"},
            "packed_tokens": packed["tokens"],
            "records_per_step": round(p.batch * packed["documents_per_row"], 1),
            "mfu": mfu(flops / max(out.seconds, 1e-9) / distributed.current().size, s.device, s.dtype),
            "compute": {**compute, "cumulative": cumulative(compute, before)},
        }  # fmt: skip
        log += [{"run": run.name, **row} for row in out.log]
    return metrics, log
