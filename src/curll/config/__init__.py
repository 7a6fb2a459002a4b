"""Typed, frozen, validated params: ``params.yaml`` loaded once per run.

One section per DVC stage, each a frozen pydantic model with ``extra="forbid"``:
an unknown key, a wrong type (no silent coercion: ``"5"`` is not an int) or an
out-of-range value raises :class:`CurllError` naming the file and the dotted key (a list
item by its 0-based index: ``evaluate.judges.1``), e.g. ``params.yaml, field
'vocab.max_per_stage': must be >= 0 (got -1)``. The message shows the bad value only: never a
whole section, and never a URL that holds a credential (such params are refused: DVC would
copy the credential into ``dvc.lock``). A name that must be an ``llm.profiles`` name
(``llm.use``, ``split.rater``, each of ``evaluate.judges``) is checked when params load.

Paths (inputs and outputs) live here too, so ``dvc.yaml`` templating (``${...}``) and
the stage code read the same single definition.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError, model_validator

from curll.config.base import ByProfile, ParamsError, Section
from curll.config.data import TaxonomyParams, VocabParams
from curll.config.evaluate import EvaluateParams
from curll.config.generation import (
    GenerateMergeParams,
    GenerateParams,
    SeedsParams,
    SkillGraphParams,
    TemplatesParams,
)
from curll.config.llm import LLMParams, not_a_profile
from curll.config.models import LLMModelsParams
from curll.config.paths import path_problems
from curll.config.train import TokenizerParams, TrainParams
from curll.config.verify import SplitParams, SplitReleaseParams, VerifyEncoderParams, VerifyParams
from curll.errors import CurllError
from curll.orders import spec
from curll.text import DECIMAL
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
        named = [("split.rater", self.split.rater)]
        named += [(f"evaluate.judges.{i}", judge) for i, judge in enumerate(self.evaluate.judges)]
        # overrides keyed by profile: a key no profile has would never apply, silently
        keyed = {f"{key}.by_profile": o.by_profile for key, o in _by_profile(self)}
        keyed["evaluate.min_yield"] = (
            self.evaluate.min_yield if isinstance(self.evaluate.min_yield, dict) else {}
        )
        named += [(f"{key}.{name}", name) for key, names in keyed.items() for name in names]
        unknown = [(key, not_a_profile(name, self.llm.profiles)) for key, name in named
                   if name not in self.llm.profiles]  # fmt: skip
        if unknown:
            raise ParamsError(*unknown)
        return self

    def profiles_in_use(self) -> list[str]:
        """``llm.use``, split's rater and the judges, in that order, without repeats."""
        return list(dict.fromkeys([self.llm.use, self.split.rater, *self.evaluate.judges]))


def _by_profile(model: BaseModel, prefix: str = "") -> list[tuple[str, ByProfile[Any]]]:
    """Every :class:`ByProfile` setting under ``model``, with its dotted key."""
    found: list[tuple[str, ByProfile[Any]]] = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, ByProfile):
            found.append((prefix + name, value))
        elif isinstance(value, BaseModel):
            found += _by_profile(value, f"{prefix}{name}.")
    return found


__all__ = ["DEFAULT_PARAMS", "Params", "load_params", "parse_params", "raise_problems"]


def parse_params(data: Any, *, source: str | Path = DEFAULT_PARAMS) -> Params:
    """Validate an already-loaded mapping; errors name ``source`` and the dotted key.

    The token budgets of the LLM tasks are checked apart, by
    :func:`pipeline.tools.budget.check_budgets` (the ``curll`` command runs it before every stage):
    it reads every task's schema, and this module stays free of the task code, so a stage's
    DVC deps do not include tasks it never runs.
    """
    if not isinstance(data, dict):
        raise CurllError("params must be a mapping of stage sections", file=source)
    try:
        params = Params.model_validate(data)
    except ValidationError as exc:
        raise _to_curll_error(exc, source, data) from None
    raise_problems(
        _stage_problems(params) + _context_problems(params) + _seed_problems(params)
        + _task_sampling_problems(params) + path_problems(params),
        source,
    )  # fmt: skip
    return params


def raise_problems(problems: list[tuple[str, str]], source: str | Path) -> None:
    """A :class:`CurllError` naming the first (params key, message) and the rest after it, on one
    line (:func:`_one_error`)."""
    if problems:
        raise _one_error(problems, source)


def _one_error(problems: list[tuple[str, str]], source: str | Path) -> CurllError:
    """The first (params key, message) as the error, the others after it on the same line, keys
    that share a message given together: ``...; also vocab, llm: required key is missing``."""
    (key, msg), *rest = problems
    shared: dict[str, list[str]] = {}
    for k, m in rest:
        shared.setdefault(m, []).append(k)
    msg += "".join(f"; also {', '.join(keys)}: {m}" for m, keys in shared.items())
    return CurllError(msg, file=source, field=key)


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
    return problems + _checkpoint_problems(params)


def _checkpoint_problems(params: Params) -> list[tuple[str, str]]:
    """A checkpoint's stages are those its order has seen at its last stage, one of
    ``train.stages`` (so it is named, and its unigram baseline counted, as curll's own run)."""
    problems = []
    stages = params.train.stages
    for i, c in enumerate(params.evaluate.checkpoints.models):
        key = f"evaluate.checkpoints.models.{i}.stages"
        if c.stages[-1] not in stages:
            problems.append((key, f"last stage {c.stages[-1]} is not in train.stages {list(stages)}"))
            continue
        seen = spec(c.order).seen(stages, stages.index(c.stages[-1]))
        if c.stages != seen:
            problems.append((key, f"a {c.order} model of stage {c.stages[-1]} has seen stages {list(seen)}, "
                             f"not {list(c.stages)}"))  # fmt: skip
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
    e, graph = params.evaluate, params.skill_graph.prompts
    paths = [*params.generate.prompts.values(), graph.edge, graph.weight, params.templates.prompt,
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


#: params mappings whose values are tagged unions: pydantic puts the tag (the backend, the kind)
#: after the name in an error's location, and it is no key the user wrote
_TAGGED = {("llm", "profiles"), ("llm_models", "builtin")}

#: the longest value shown in an error ("got ..."); a longer one is cut
_SHOWN = 80


def _to_curll_error(exc: ValidationError, source: str | Path, data: Any = None) -> CurllError:
    """One CurllError for pydantic's errors: the first key and its message, the others after it
    (:func:`_one_error`); a key as the user wrote it (:func:`_written`), each key once."""
    problems: dict[str, str] = {}
    mismatched: set[str] = set()  # keys whose message says only that the value is of another type
    for err in exc.errors():
        loc = [str(part) for part in err["loc"]]
        if len(loc) >= 4 and (loc[0], loc[1]) in _TAGGED:
            del loc[3]
        kind = err["type"]
        raised = err.get("ctx", {}).get("error")
        if isinstance(raised, ParamsError):  # a validator that names its keys: shown as it says
            for key, msg in raised.problems:
                problems.setdefault(".".join([*loc, key] if key else loc), msg)
            continue
        if kind == "extra_forbidden":
            msg = "unknown key (a typo? see params.yaml's documented keys)"
        elif kind == "missing":
            msg = "required key is missing"
        else:
            shown = err.get("input")
            msg = err["msg"].removeprefix("Value error, ") + _shown(shown) + _hint(shown, kind)
        key = ".".join(_written(loc, data, missing=kind == "missing"))
        if key not in problems or (key in mismatched and not kind.endswith("_type")):
            problems[key] = msg  # a union member the value's shape fits says more than one it does not
        if kind.endswith("_type"):
            mismatched.add(key)
        else:
            mismatched.discard(key)
    deeper = [k for k in problems if any(o.startswith(k + ".") for o in problems)]
    for k in deeper:  # a union's members disagree: the one that got inside the value says more
        del problems[k]
    return _one_error(list(problems.items()), source)


def _written(loc: list[str], data: Any, *, missing: bool) -> list[str]:
    """``loc`` as the user wrote it: pydantic puts a union member's name (``float``,
    ``tuple[...]``, ``function-after[...]``) after a key whose value no member took, which is no
    key of the params; such a part is left out, and the parts after it (a list's index, a map's
    key) are kept where the value has them. A required key that is missing is kept (``missing``)."""
    if data is None:
        return loc
    out: list[str] = []
    at: Any = data
    for i, part in enumerate(loc):
        if isinstance(at, dict) and (part in at or (part.lstrip("-").isdigit() and int(part) in at)):
            at = at[part] if part in at else at[int(part)]  # YAML reads ``3:`` as an int key
        elif isinstance(at, list) and part.isdigit() and int(part) < len(at):
            at = at[int(part)]
        elif missing and isinstance(at, dict) and i == len(loc) - 1:
            pass  # the missing key itself
        else:
            continue  # a union member's name
        out.append(part)
    return out


_OLD_BOOLEANS = frozenset({"yes", "no", "on", "off", "y", "n"})


def _hint(value: Any, kind: str) -> str:
    """What to write instead (``kind``: pydantic's error type): a number in quotes is text; a
    whole float such as ``1e3`` (a float in YAML 1.2) is written as an integer for an integer key;
    YAML 1.1's booleans (``yes``, ``off``...) are text in YAML 1.2."""
    if kind.startswith("bool") and isinstance(value, str) and value.lower() in _OLD_BOOLEANS:
        return ": write true or false (YAML 1.2, as DVC reads it, takes yes, no, on and off as text)"
    if isinstance(value, str) and DECIMAL.fullmatch(value.strip()):
        number = float(value)
        if kind.startswith("int") and number.is_integer():  # 1e3 unquoted is 1000.0, refused too
            return f": write {int(number)} (a number in quotes is text)"
        return f": write {value.strip()} without quotes (a number in quotes is text)"
    if kind.startswith("int") and isinstance(value, float) and value.is_integer():
        return f": write {int(value)}"
    return ""


def _shown(value: Any) -> str:
    """`` (got <value>)`` for a value a person can read in one line; nothing for a section."""
    if isinstance(value, dict):
        return ""
    text = repr(value)
    return f" (got {text if len(text) <= _SHOWN else text[: _SHOWN - 3] + '...'})"
