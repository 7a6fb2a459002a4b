"""DVC stage ``generate_model``: build the embedded tiny LLM the default params generate with.

Reads ``params.generate_model``; writes the Hugging Face model folder ``out.model``
(random-weight Llama + locally trained BPE tokenizer) and ``out.stats`` (shape, parameter
count). Its text is meaningless: it exists so every LLM stage runs offline on CPU.
"""

from __future__ import annotations

from curll.artifacts import write_json
from curll.config import Params
from curll.llm.embedded import TinyLlamaShape, build_embedded_model
from pipeline.report import say


def run(params: Params) -> None:
    p = params.generate_model
    shape = TinyLlamaShape(p.vocab_size, p.hidden, p.layers, p.heads, p.kv_heads, p.ffn, p.max_positions)
    summary = build_embedded_model(p.corpus, p.out.model, shape, p.seed)
    write_json(p.out.stats, summary)
    say(
        f"generate_model: {summary['parameters']:,} parameters, "
        f"vocab {summary['vocab_size']} -> {p.out.model}"
    )
