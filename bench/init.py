"""Kaiming (the paper's) against small-normal initialisation, on the same real text and steps.

Paragraphs of a real English text (default: the CurLL paper in ``../shared/reference``, else
this README) become documents (chunks of at most ``--context`` tokens of a byte-level BPE
trained on them, loss on every token); a seeded tenth is held out. Each init trains the same
preset on the same packed rows in the same order for ``--steps`` steps; printed: the training
loss along the way, and the held-out loss (nats per token) before and after, with the
uniform-guess level ln V for reference.

    python -m bench.init [--text FILE] [--preset smollm2-8m] [--steps 300]
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path
from tempfile import TemporaryDirectory

import numpy as np
import torch

from curll.config.train import OptimParams
from curll.llm.bpe import train_bpe
from curll.model.config import preset
from curll.model.llama import CausalLM
from curll.train.data import Doc, pack
from curll.train.trainer import Settings, eval_loss, train

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TEXTS = [ROOT.parent / "shared" / "reference" / "curll-paper.txt", ROOT / "README.md"]


def documents(text: str, tok: object, context: int) -> list[Doc]:
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if len(p.split()) >= 8]
    docs = []
    for para in paragraphs:
        ids = tok(para, add_special_tokens=False)["input_ids"]  # type: ignore[operator]
        for start in range(0, len(ids), context):
            piece = ids[start : start + context + 1]
            if len(piece) > 8:
                docs.append(Doc(piece, [True] * len(piece)))
    return docs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--text", type=Path, default=next((p for p in DEFAULT_TEXTS if p.is_file()), None))
    ap.add_argument("--preset", default="smollm2-8m")
    ap.add_argument("--context", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    text = a.text.read_text(encoding="utf-8")
    tok = train_bpe([text], a.vocab)
    docs = documents(text, tok, a.context)
    rng = np.random.default_rng(0)
    held = set(rng.choice(len(docs), size=max(1, len(docs) // 10), replace=False).tolist())
    train_rows = pack([d for i, d in enumerate(docs) if i not in held], a.context, pad_id=tok.pad_token_id)
    val = pack([d for i, d in enumerate(docs) if i in held], a.context, pad_id=tok.pad_token_id)
    epochs = max(1, math.ceil(a.steps * a.batch / train_rows.rows))
    optim = OptimParams(lr=a.lr, beta1=0.9, beta2=0.98, eps=1e-8, weight_decay=0.01, clip=1.0,
                        schedule="cosine", warmup=0.05, decay=0.2, min_lr_ratio=0.1)  # fmt: skip
    s = Settings(batch=a.batch, micro_batch=a.batch, epochs=epochs, seed=0, checkpoint_every=10**9,
                 log_every=max(1, a.steps // 6), optim=optim)  # fmt: skip
    steps = math.ceil(epochs * train_rows.rows / a.batch)  # whole epochs: at least --steps
    shape = f"{a.preset}, {steps} steps of {a.batch} x {a.context}"
    print(f"{a.text.name}: {len(docs)} documents ({val.stats()['tokens']} tokens held out), vocabulary "
          f"{len(tok)} (ln V = {math.log(len(tok)):.2f}), {shape}")  # fmt: skip
    results = {}
    for init in ("kaiming", "normal"):
        torch.manual_seed(0)
        model = CausalLM(preset(a.preset, vocab_size=len(tok)), init)
        before = eval_loss(model, val, device="cpu", micro_batch=a.batch)
        with TemporaryDirectory() as tmp:
            out = train(model, train_rows, s, ckpt=Path(tmp) / "c.pt", desc=init)
        after = eval_loss(model, val, device="cpu", micro_batch=a.batch)
        results[init] = (before, after, [(r["step"], r["loss"]) for r in out.log])
    for init, (before, after, curve) in results.items():
        steps = ", ".join(f"{st}: {loss:.2f}" for st, loss in curve)
        print(f"  {init:<8} held-out {before:.2f} -> {after:.2f}   train loss by step  {steps}")


if __name__ == "__main__":
    main()
