"""What scoring a released checkpoint's loss costs on this machine: the SmolLM2-135M shape (the
CurLL authors' models; random weights, vocabulary 49,152) on ``--records`` eval records in the
authors' layout of sizes, with ``evaluate_loss``'s own function (:func:`curll.evaluate.nll.record_nll`:
packed rows of ``--context`` tokens, ``--micro-batch`` rows a forward pass, float32, no gradients).

The records are made here: passages of 250-500 words of child-level text (harness/corpus.py, the
paper's passage length) with a question and a short answer (CQA), the same with a skill task
(CSQA), and standalone instructions with a longer response (IR), one third each. The tokenizer
is a byte-level BPE trained on the same text (about as many tokens a word as SmolLM2's).
Prints one JSON line: records, tokens, answer tokens, seconds, records a second, and what the
authors' 15 checkpoints take on ``--records`` records each.

Usage: python -m bench.checkpoint_loss [--records 1000] [--context 1024] [--micro-batch 8] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import random
import time

from harness.corpus import corpus


def records(n: int, seed: int = 0) -> tuple[list[str], list[str], list[str]]:
    """``n`` chat records (``messages`` JSON), their types (CQA, CSQA and IR in turn) and
    passages."""
    from curll.chat import record_chat, user_turn

    rng = random.Random(seed)
    texts = corpus(3 * n, planted=0.0, seed=seed)
    out, types, passages = [], [], []
    for i in range(n):
        words = " ".join(texts[3 * i : 3 * i + 3]).split()
        passage = " ".join(words[: rng.randint(250, 500)])
        kind = ("cqa", "csqa", "ir")[i % 3]
        question, answer = f"What happens to {words[3]} in the story?", " ".join(words[10:30]) + "."
        if kind == "ir":
            question, answer, passage = f"Write about {words[5]}.", " ".join(words[:120]) + ".", ""
        out.append(record_chat("You are a friendly teacher.", user_turn(kind, question, passage), answer))
        types.append(kind)
        passages.append(passage)
    return out, types, passages


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1000)
    ap.add_argument("--context", type=int, default=1024)
    ap.add_argument("--micro-batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    import torch

    from curll.evaluate.nll import record_nll
    from curll.llm.bpe import train_bpe
    from curll.model.config import preset
    from curll.model.llama import from_seed

    torch.set_num_threads(args.threads)
    messages, types, passages = records(args.records)
    tok = train_bpe(corpus(2000, planted=0.0, seed=1), 8192)
    model = from_seed(preset("smollm2-135m", vocab_size=49152), "normal", 0)
    start = time.perf_counter()
    _, n = record_nll(
        model, messages, types, tok, context=args.context, micro_batch=args.micro_batch, passages=passages
    )
    seconds = time.perf_counter() - start
    tokens = sum(len(tok(m)["input_ids"]) for m in messages)
    print(json.dumps({
        "records": args.records, "scored": int((n > 0).sum()), "tokens": tokens,
        "answer_tokens": int(n.sum()),
        "seconds": round(seconds, 1), "records_per_s": round(args.records / seconds, 2),
        "fifteen_checkpoints_hours": round(15 * seconds / 3600, 2), "threads": args.threads,
        "parameters": model.num_parameters(),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
