"""A backend built in code and one built from params behave alike: every setting a profile
and its backend's constructor share has the same default in both (the profile's is what
params.yaml leaves out; the constructor's what a caller leaves out)."""

from __future__ import annotations

import inspect

import pytest
from pydantic_core import PydanticUndefined

from curll.config.llm import LlamaCppProfile, OpenAIProfile, TransformersProfile, VLLMProfile
from curll.llm.llamacpp_backend import LlamaCppBackend
from curll.llm.openai_backend import OpenAIBackend
from curll.llm.transformers_backend import TransformersBackend
from curll.llm.vllm_backend import VLLMBackend

PAIRS = [
    (TransformersProfile, TransformersBackend),
    (OpenAIProfile, OpenAIBackend),
    (LlamaCppProfile, LlamaCppBackend),
    (VLLMProfile, VLLMBackend),
]


@pytest.mark.parametrize(("profile", "backend"), PAIRS, ids=lambda c: c.__name__)
def test_a_setting_defaults_alike_in_the_profile_and_the_constructor(profile, backend):
    params = inspect.signature(backend.__init__).parameters
    shared = [n for n in profile.model_fields if n in params]
    assert len(shared) >= 2, f"{backend.__name__} shares too few settings with {profile.__name__}"
    for name in shared:
        field, arg = profile.model_fields[name], params[name]
        if field.default is PydanticUndefined or arg.default is inspect.Parameter.empty:
            continue  # required on one side: no default to disagree
        assert arg.default == field.default, f"{backend.__name__}({name}=...) vs {profile.__name__}.{name}"
