"""verify_encoder on a source that is already a model2vec model: saved as it is, no distillation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from curll.errors import CurllError
from curll.verify.encoder import distill_encoder, is_model2vec, load_encoder


def test_a_model2vec_source_is_saved_as_it_is_and_encodes_alike(encoder_folder, tmp_path):
    assert is_model2vec(str(encoder_folder))
    stats = distill_encoder(str(encoder_folder), tmp_path / "enc", pca_dims=None)
    rows = len(json.loads((encoder_folder / "tokenizer.json").read_text())["model"]["vocab"])
    assert stats == {"source": str(encoder_folder), "vocabulary": rows, "dims": 64}
    for name in ("model.safetensors", "config.json", "tokenizer.json"):  # its own files, as they are
        assert (tmp_path / "enc" / name).read_bytes() == (encoder_folder / name).read_bytes()
    texts = ["A cat sat on the mat.", "Two plus two makes four."]
    a = load_encoder("model2vec", str(encoder_folder)).encode(texts)
    b = load_encoder("model2vec", str(tmp_path / "enc")).encode(texts)
    np.testing.assert_array_equal(a, b)


def test_a_width_the_model2vec_source_does_not_have_is_refused_by_key(encoder_folder, tmp_path):
    with pytest.raises(CurllError, match="model2vec model of 64 dims") as err:
        distill_encoder(str(encoder_folder), tmp_path / "enc", pca_dims=32)
    assert err.value.field == "verify_encoder.pca_dims" and not (tmp_path / "enc").exists()


def test_only_a_folder_whose_config_says_model2vec_counts(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    assert not is_model2vec(str(tmp_path)) and not is_model2vec(str(tmp_path / "missing"))
    (tmp_path / "config.json").write_text("not json")
    assert not is_model2vec(str(tmp_path))
