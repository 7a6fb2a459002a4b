"""transformers' per-load progress bars ("Loading weights"), turned off around a load.

A stage that loads a model a run (the rater, each trained model to answer, each judge, the
encoder's teacher) would print a bar per load that fills in a few milliseconds: lines in the
log that show no progress. The stages' own bars (answers, batches) are not transformers' and
are kept.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_load_bars() -> Iterator[None]:
    """transformers' progress bars off inside the block, as they were after it (also on error);
    left as they are where ``HF_HUB_DISABLE_PROGRESS_BARS`` is set: the user has chosen."""
    from transformers.utils import logging as hf_logging

    if os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS") is not None:
        yield
        return
    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
