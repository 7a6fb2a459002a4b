"""Typed, frozen, validated params: ``params.yaml`` loaded once per run.

One section per DVC stage, each a frozen pydantic model with ``extra="forbid"``:
an unknown key, a wrong type (no silent coercion: ``"5"`` is not an int) or an
out-of-range value raises :class:`CurllError` naming the file and the dotted key,
e.g. ``params.yaml, field 'vocab.max_per_stage': must be >= 0 (got -1)``.

Paths (inputs and outputs) live here too, so ``dvc.yaml`` templating (``${...}``) and
the stage code read the same single definition.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError, model_validator

from curll.config.base import Section
from curll.config.data import TaxonomyParams, VocabParams
from curll.config.evaluate import EvaluateParams
from curll.config.generation import (
    GenerateMergeParams,
    GenerateParams,
    SeedsParams,
    SkillGraphParams,
    TemplatesParams,
)
from curll.config.llm import LLMParams
from curll.config.models import LLMModelsParams
from curll.config.train import TokenizerParams, TrainParams
from curll.config.verify import SplitParams, SplitReleaseParams, VerifyEncoderParams, VerifyParams
from curll.errors import CurllError
from curll.yamlio import load_yaml

DEFAULT_PARAMS = Path("params.yaml")


class Params(Section):
    """The whole ``params.yaml``: one section per stage, plus ``llm`` shared by the LLM stages."""

    taxonomy: TaxonomyParams
    vocab: VocabParams
    llm: LLMParams
    llm_models: LLMModelsParams
    skill_graph: SkillGraphParams
    templates: TemplatesParams
    seeds: SeedsParams
    generate: GenerateParams
    generate_merge: GenerateMergeParams
    verify_encoder: VerifyEncoderParams
    verify: VerifyParams
    split: SplitParams
    split_release: SplitReleaseParams
    tokenizer: TokenizerParams
    train: TrainParams
    evaluate: EvaluateParams

    @model_validator(mode="after")
    def _judges_are_profiles(self) -> Params:
        unknown = [j for j in self.evaluate.judges if j not in self.llm.profiles]
        if unknown:
            raise ValueError(f"evaluate.judges {unknown} are not llm.profiles: {sorted(self.llm.profiles)}")
        if self.split.rater not in self.llm.profiles:
            raise ValueError(
                f"split.rater '{self.split.rater}' is not one of llm.profiles: {sorted(self.llm.profiles)}"
            )
        return self

    def profiles_in_use(self) -> list[str]:
        """``llm.use``, split's rater and the judges, in that order, without repeats."""
        return list(dict.fromkeys([self.llm.use, self.split.rater, *self.evaluate.judges]))


__all__ = ["DEFAULT_PARAMS", "Params", "load_params", "parse_params", "raise_problems"]


def parse_params(data: Any, *, source: str | Path = DEFAULT_PARAMS) -> Params:
    """Validate an already-loaded mapping; errors name ``source`` and the dotted key.

    The token budgets of the LLM tasks are checked apart, by
    :func:`pipeline.budget.check_budgets` (the ``curll`` command runs it before every stage):
    it reads every task's schema, and this module stays free of the task code, so a stage's
    DVC deps do not include tasks it never runs.
    """
    if not isinstance(data, dict):
        raise CurllError("params must be a mapping of stage sections", file=source)
    try:
        params = Params.model_validate(data)
    except ValidationError as exc:
        raise _to_curll_error(exc, source) from None
    raise_problems(
        _stage_problems(params) + _context_problems(params) + _seed_problems(params)
        + _task_sampling_problems(params),
        source,
    )  # fmt: skip
    return params


def raise_problems(problems: list[tuple[str, str]], source: str | Path) -> None:
    """A :class:`CurllError` naming the first (params key, message) and listing the rest."""
    if problems:
        key, msg = problems[0]
        msg += "".join(f"\n  - {k}: {m}" for k, m in problems[1:])
        raise CurllError(msg, file=source, field=key)


def _stage_problems(params: Params) -> list[tuple[str, str]]:
    """Params naming stages name the taxonomy's: train only stages it keeps, vocab all of them."""
    kept, trained, worded = set(params.taxonomy.stages), set(params.train.stages), set(params.vocab.stages)
    problems = []
    if not trained <= kept:
        problems.append(("train.stages", f"stage(s) {sorted(trained - kept)} are not in taxonomy.stages "
                         f"{sorted(kept)}: there would be nothing to train on"))  # fmt: skip
    if not kept <= worded:
        problems.append(("vocab.stages", f"lacks stage(s) {sorted(kept - worded)} of taxonomy.stages "
                         f"{sorted(kept)}: their seeds would have no words"))  # fmt: skip
    return problems


def _context_problems(params: Params) -> list[tuple[str, str]]:
    """Test prompts and answers must fit the positions the models were trained on."""
    infer = params.evaluate.infer
    need = infer.prompt_tokens + infer.sampling.max_tokens
    if need <= params.train.context:
        return []
    return [(
        "evaluate.infer.prompt_tokens",
        f"prompt_tokens ({infer.prompt_tokens}) + sampling.max_tokens ({infer.sampling.max_tokens}) = {need} "
        f"is more than train.context ({params.train.context}): the models would answer at positions "
        "they were never trained on; lower prompt_tokens or raise train.context",
    )]  # fmt: skip


def _seed_problems(params: Params) -> list[tuple[str, str]]:
    """The judged seeds must be trained."""
    judged, trained = params.evaluate.judge_seeds, len(params.train.seeds)
    if judged <= trained:
        return []
    return [("evaluate.judge_seeds", f"judge_seeds ({judged}) is more than the {trained} train.seeds")]


def prompt_names(params: Params) -> set[str]:
    """The task names ``task_sampling`` may use: the stems of every prompt file the params name."""
    g, e = params.generate.prompts, params.evaluate
    graph = params.skill_graph.prompts
    paths = [g.context, g.ir, g.cqa, g.csqa, graph.edge, graph.weight, params.templates.prompt,
             params.split.prompt, *e.prompts.values(), e.rubric.prompt]  # fmt: skip
    return {Path(p).stem for p in paths}


def _task_sampling_problems(params: Params) -> list[tuple[str, str]]:
    """A profile's ``task_sampling`` must name tasks the params have (a typo would change nothing)."""
    known = prompt_names(params)
    return [
        (f"llm.profiles.{name}.task_sampling.{task}", f"no task is named {task!r}; tasks: {sorted(known)}")
        for name, profile in params.llm.profiles.items()
        for task in profile.task_sampling
        if task not in known
    ]


def load_params(path: str | Path = DEFAULT_PARAMS) -> Params:
    """Read and validate ``path`` (YAML; a key given twice is an error, as in DVC)."""
    p = Path(path)
    if not p.is_file():
        raise CurllError("params file not found", file=p)
    return parse_params(load_yaml(p), source=p)


def _to_curll_error(exc: ValidationError, source: str | Path) -> CurllError:
    problems = []
    for err in exc.errors():
        loc = list(err["loc"])
        # a tagged union adds its tag (the backend) after the profile name: not a key the user wrote
        loc = [part for i, part in enumerate(loc) if not (i >= 2 and loc[i - 2] == "profiles")]
        key = ".".join(str(part) for part in loc)
        kind = err["type"]
        if kind == "extra_forbidden":
            msg = "unknown key (a typo? see params.yaml's documented keys)"
        elif kind == "missing":
            msg = "required key is missing"
        else:
            msg = f"{err['msg']} (got {err.get('input')!r})"
        problems.append((key, msg))
    key, msg = problems[0]
    if len(problems) > 1:
        msg += "".join(f"\n  - {k}: {m}" for k, m in problems[1:])
    return CurllError(msg, file=source, field=key)
