from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from curll.config import Params, load_params, parse_params
from curll.errors import CurllError
from curll.yamlio import dump_yaml, load_yaml
from pipeline.tools.budget import check_budgets

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def good() -> dict[str, Any]:
    data: dict[str, Any] = load_yaml(ROOT / "params.yaml")
    return data


def test_repo_params_load_frozen(good):
    params = load_params(ROOT / "params.yaml")
    assert params.vocab.stages == (0, 1, 2, 3, 4)
    with pytest.raises(Exception, match="frozen"):
        params.vocab.seed = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("mutate", "key", "message"),
    [
        (lambda d: d["vocab"].update(max_per_stag=3), "vocab.max_per_stag", "unknown key"),
        (lambda d: d.update(trainn={}), "trainn", "unknown key"),
        (lambda d: d["vocab"].update(max_per_stage="5"), "vocab.max_per_stage", "valid integer"),
        (lambda d: d["vocab"].update(max_per_stage=-1), "vocab.max_per_stage", "greater than or equal to 0"),
        (lambda d: d["vocab"].update(bands="sometimes"), "vocab.bands", "exclusive"),
        (lambda d: d["taxonomy"].update(stages=[0, 12]), "taxonomy.stages.1", "less than or equal to 9"),
        (lambda d: d["taxonomy"].update(stages=[1, 1]), "taxonomy.stages", "must not repeat"),
        (lambda d: d["taxonomy"]["out"].pop("stats"), "taxonomy.out.stats", "missing"),
        (lambda d: d["vocab"].update(seed=True), "vocab.seed", "valid integer"),
        (  # urllib would refuse the port only at the first request, with a traceback
            lambda d: d["llm"]["profiles"]["server"].update(base_url="http://127.0.0.1:99999/v1"),
            "llm.profiles.server.base_url",
            "is not an http:// or https:// URL with a host and a valid port",
        ),
        (
            lambda d: d["llm"]["profiles"]["server"].update(base_url=" http://127.0.0.1:8000/v1"),
            "llm.profiles.server.base_url",
            "has white space around it",
        ),
        (lambda d: d["llm"].update(use="gpt"), "llm.use", r"^'gpt' is not one of llm.profiles: \['embedded'"),
        (
            lambda d: d["evaluate"].update(judges=["smollm2-torch", "ghost"]),
            "evaluate.judges.1",
            r"^'ghost' is not one of llm.profiles: \['embedded'",
        ),
        (lambda d: d["split"].update(rater="ghost"), "split.rater", r"^'ghost' is not one of llm.profiles"),
        (  # an override for a profile that does not exist would never apply
            lambda d: d["verify"]["content"]["by_profile"].update(smollm3=d["verify"]["content"]["default"]),
            "verify.content.by_profile.smollm3",
            r"^'smollm3' is not one of llm.profiles",
        ),
        (
            lambda d: d["verify"]["context_words"]["by_profile"].update(smolm2={"min": 1, "max": 9}),
            "verify.context_words.by_profile.smolm2",
            "is not one of llm.profiles",
        ),
        (
            lambda d: d["templates"]["dictionary"]["by_profile"].update(ghost=True),
            "templates.dictionary.by_profile.ghost",
            "is not one of llm.profiles",
        ),
        (lambda d: d["evaluate"].update(min_yield={"ghost": 0.5}), "evaluate.min_yield.ghost", "not one of"),
        (
            lambda d: d["llm"]["profiles"]["embedded"].update(base_url="http://x"),
            "llm.profiles.embedded.base_url",
            "unknown key",
        ),
        (lambda d: d["llm"]["profiles"]["server"].pop("base_url"), "llm.profiles.server.base_url", "missing"),
        (  # a profile's name keys DVC params and names its llm_models folder: no dot, no slash
            lambda d: d["llm"]["profiles"].update({"a.b": d["llm"]["profiles"]["embedded"]}),
            "llm.profiles.a.b",
            "should match pattern",
        ),
        (
            lambda d: d["llm"]["profiles"].update({"../x": d["llm"]["profiles"]["embedded"]}),
            "llm.profiles.../x",
            "should match pattern",
        ),
        (lambda d: d["llm"]["profiles"]["server"].update(backend="tgi"), "llm.profiles.server", "backend"),
        (
            lambda d: d["llm"]["profiles"]["embedded"]["sampling"].update(temperature=3),
            "llm.profiles.embedded.sampling.temperature",
            "less than or equal to 2",
        ),
        (lambda d: d["templates"].update(min_items=30), "templates", "min_items <= max_items"),
        (
            lambda d: d["llm_models"]["builtin"]["embedded"].update(heads=5),
            "llm_models.builtin.embedded",  # the kind (the union's tag) is no key the user wrote
            "multiple of heads",
        ),
        (
            lambda d: d["llm_models"]["builtin"]["smollm2-135m-instruct"].update(sha256="abc"),
            "llm_models.builtin.smollm2-135m-instruct.sha256",
            "should match pattern",
        ),
        (lambda d: d["skill_graph"].update(candidates="some"), "skill_graph.candidates", "all"),
        (lambda d: d["generate"].update(shards=0), "generate.shards", "greater than or equal to 1"),
        (lambda d: d["verify"]["semantic"].update(threshold=1.5), "verify.semantic.threshold", "less than"),
        (lambda d: d["verify"]["semantic"].update(index="faiss"), "verify.semantic.index", "exact"),
        (
            lambda d: d["verify"]["context_words"]["default"].update(min=600),
            "verify.context_words.default",
            "min \\(600\\) must be <= max",
        ),
        (lambda d: d["split"].update(test_per_indicator=-1), "split.test_per_indicator", "greater than"),
        (lambda d: d["train"].update(seeds=[42, 42]), "train.seeds", "must not repeat"),
        (lambda d: d["train"].update(order=["joint", "joint"]), "train.order", "order must not repeat"),
        (lambda d: d["train"].update(preset="huge"), "train.preset", r"unknown model preset 'huge'; known: "),
        (lambda d: d["train"].update(seeds=[]), "train.seeds", "at least 1"),
        (lambda d: d["train"].update(budget="tokens"), "train.budget", "'data' or 'steps'"),
        (lambda d: d["train"].update(budget=None), "train.budget", "'data' or 'steps'"),
        (lambda d: d["train"].update(steps_per_stage=-1), "train.steps_per_stage", "greater than or equal"),
        (lambda d: d["train"].update(steps_per_stage="10"), "train.steps_per_stage", "valid integer"),
        (  # a step count that budget data would ignore
            lambda d: d["train"].update(budget="data", steps_per_stage=10),
            "train.steps_per_stage",
            r"steps_per_stage \(10\) is for budget: steps, not budget: data",
        ),
        (lambda d: d["train"]["optim"].update(rewarm="yes"), "train.optim.rewarm", "valid boolean"),
        (lambda d: d["train"]["optim"].update(rewarm_steps=3), "train.optim.rewarm_steps", "unknown key"),
        (
            lambda d: d["evaluate"].update(judge_seeds=9),
            "evaluate.judge_seeds",
            r"\(9\) is more than the 3 train.seeds",
        ),
        (  # the controls come from the answered items: more than those would be silently fewer
            lambda d: d["evaluate"]["controls"].update(per_type=d["evaluate"]["max_per_type"] + 1),
            "evaluate.controls.per_type",
            r"is more than evaluate.max_per_type \(\d+\): the controls are drawn from the test items",
        ),
        (lambda d: d["split"]["decontamination"].update(ngrams=8), "split.decontamination.ngrams", "unknown"),
        (  # a task name that no prompt file has would change nothing: refused
            lambda d: d["llm"]["profiles"]["embedded"].update(
                task_sampling={"contxt": {"frequency_penalty": 0.5}}
            ),
            "llm.profiles.embedded.task_sampling.contxt",
            r"no task is named 'contxt'; tasks: \['context', 'cqa'",
        ),
        (  # length and seed stay the profile's (the caps check reads them)
            lambda d: d["llm"]["profiles"]["embedded"].update(task_sampling={"context": {"max_tokens": 9}}),
            "llm.profiles.embedded.task_sampling.context.max_tokens",
            "unknown key",
        ),
        (
            lambda d: d["train"].update(stages=[0, 5]),
            "train.stages",
            r"stage\(s\) \[5\] are not in taxonomy.stages",
        ),
        (
            lambda d: d["taxonomy"].update(stages=[6, 7]),
            "train.stages",  # the first of two: vocab.stages lacks 6 and 7 too
            r"\[0, 1, 2, 3, 4\] are not in taxonomy.stages \[6, 7\](.|\n)*vocab.stages: lacks stage",
        ),
        (lambda d: d["taxonomy"].update(stages=[3, 10]), "taxonomy.stages.1", "less than or equal to 9"),
        (lambda d: d["taxonomy"].update(duplicates="keep"), "taxonomy.duplicates", "'error' or 'drop'"),
        (lambda d: d["vocab"].update(dedup="last"), "vocab.dedup", "'lemma_row' or 'first_row'"),
        (
            lambda d: d["taxonomy"].update(layout="table"),
            "taxonomy",
            "needs taxonomy.columns and taxonomy.grades",
        ),
        (lambda d: d["taxonomy"].update(grades={"K": 0}), "taxonomy", "for layout table, not curll-yaml"),
        (
            lambda d: d["taxonomy"].update(
                layout="table", grades={"K": 0}, columns={"skill": "S", "goal": "G", "grade": "Y"}
            ),
            "taxonomy",
            "name both indicator and grade",
        ),
        (  # test prompts past the trained context (896 + 128 against 256 was the old default)
            lambda d: d["train"].update(context=256),
            "evaluate.infer.prompt_tokens",
            r"prompt_tokens \(384\) \+ sampling.max_tokens \(128\) = 512 is more than train.context \(256\)",
        ),
        (
            lambda d: d["seeds"].update(per_indicator={"context": 0, "ir": 0}),
            "seeds.per_indicator",
            r"^every type is 0: mode sample would draw no seed at all$",
        ),
        # a union member the value's shape fits (a list) is the one to hear from, not "a valid string"
        (lambda d: d["train"].update(order=[]), "train.order", r"^Tuple should have at least 1 item"),
        # a min_yield key that names nothing the stage measures would set no floor, silently
        (
            lambda d: d["generate"].update(min_yield={"contxt": 0.5}),
            "generate.min_yield",
            r"^unknown instance type 'contxt' \(known: context, ir, cqa, csqa\)",
        ),
        (
            lambda d: d["verify"].update(min_yield={"context": 0.5, "cqqa": 0.5}),
            "verify.min_yield",
            r"^unknown instance type 'cqqa'",
        ),
        (
            lambda d: d["templates"].update(min_yield={"contxt": 0.5}),
            "templates.min_yield",
            r"^unknown template kind 'contxt' \(known: context, instruction\)",
        ),
        (
            lambda d: d["skill_graph"].update(min_yield={"edges": 0.5}),
            "skill_graph.min_yield",
            r"^unknown skill_graph yield type 'edges' \(known: edge\)",
        ),
        (  # quoted in the file: text, not a number
            lambda d: d["train"]["optim"].update(lr="3e-3"),
            "train.optim.lr",
            r"valid number \(got '3e-3'\): write 3e-3 without quotes \(a number in quotes is text\)",
        ),
        (  # quoted, for an integer key: the hint is the integer, not 1e3 (a float unquoted)
            lambda d: d["vocab"].update(max_per_stage="1e3"),
            "vocab.max_per_stage",
            r"valid integer \(got '1e3'\): write 1000 \(a number in quotes is text\)$",
        ),
        (  # 1e3 in the file: the float 1000.0 (YAML 1.2, as DVC reads it)
            lambda d: d["vocab"].update(max_per_stage=1000.0),
            "vocab.max_per_stage",
            r"valid integer \(got 1000\.0\): write 1000$",
        ),
        (
            lambda d: d["train"]["optim"].update(lr=float("inf")),
            "train.optim.lr",
            r"finite number \(got inf\)",
        ),
        (
            lambda d: d["evaluate"].update(untrained="yes"),
            "evaluate.untrained",
            r"\(got 'yes'\): write true or false",
        ),
        (lambda d: d["train"]["optim"].update(beta2=1.0), "train.optim.beta2", r"less than 1 \(got 1\.0\)"),
        (  # one stage's two outputs at one path: the stats would never be written
            lambda d: d["taxonomy"]["out"].update(stats="./" + d["taxonomy"]["out"]["indicators"]),
            "taxonomy.out.stats",
            r"is also taxonomy\.out\.indicators: each output needs a path of its own$",
        ),
        (  # another stage's output
            lambda d: d["vocab"]["out"].update(words=d["taxonomy"]["out"]["indicators"]),
            "vocab.out.words",
            r"is also taxonomy\.out\.indicators",
        ),
        (  # its own input: overwritten by the run
            lambda d: d["taxonomy"]["out"].update(indicators=d["taxonomy"]["input"]),
            "taxonomy.out.indicators",
            r"is taxonomy\.input, an input: the output would overwrite it$",
        ),
        (  # a prompt template
            lambda d: d["templates"]["out"].update(templates=d["split"]["prompt"]),
            "templates.out.templates",
            r"is split\.prompt, an input",
        ),
        (  # inside another stage's output folder
            lambda d: d["vocab"]["out"].update(words=d["tokenizer"]["out"]["dir"] + "/words.parquet"),
            "tokenizer.out.dir",
            r"overlaps vocab\.out\.words: one output inside another's folder",
        ),
        (  # the card's title: a second line would break its YAML header and heading
            lambda d: d["split_release"].update(name="slice\nv2"),
            "split_release.name",
            r"^one line of text",
        ),
        (  # a line separator is a line break to a Markdown reader
            lambda d: d["split_release"].update(name="slice\u2028v2"),
            "split_release.name",
            r"^one line of text",
        ),
        (
            lambda d: d["split_release"].update(license="Apache 2.0"),
            "split_release.license",
            r"^a Hub license id: .* \(got 'Apache 2\.0'\)$",
        ),
    ],
)
def test_bad_params_name_the_key(good, mutate, key, message):
    data = copy.deepcopy(good)
    mutate(data)
    with pytest.raises(CurllError) as err:
        parse_params(data, source="params.yaml")
    assert re.search(message, err.value.message), err.value.message
    assert err.value.field == key
    assert err.value.file == "params.yaml"
    first = err.value.message.split("\n")[0]
    assert "(got {" not in first and len(first) < 300  # the value only, never a whole section


#: every seed of the params: numpy and torch take 0 <= seed <= 2**32 - 1 (a negative one crashed them)
SEEDS = [
    "taxonomy.seed",
    "vocab.seed",
    "seeds.seed",
    "train.seeds.0",
    "split.seed",
    "verify.diversity.seed",
    "verify.readability.seed",
    "evaluate.seed",
    "evaluate.bootstrap.seed",
    "evaluate.controls.seed",
    "evaluate.infer.sampling.seed",
    "llm.profiles.embedded.sampling.seed",
    "llm_models.builtin.embedded.seed",
]


def _set(data: dict[str, Any], key: str, value: int) -> None:
    *path, last = key.split(".")
    node: Any = data
    for part in path:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


@pytest.mark.parametrize("key", SEEDS)
@pytest.mark.parametrize(
    ("value", "message"), [(-1, "greater than or equal to 0"), (2**32, "less than or equal to 4294967295")]
)
def test_a_seed_out_of_range_is_refused_naming_the_key(good, key, value, message):
    data = copy.deepcopy(good)
    _set(data, key, value)
    with pytest.raises(CurllError, match=message) as err:
        parse_params(data, source="params.yaml")
    assert err.value.field == key
    assert "\n" not in str(err.value)
    _set(data, key, 2**32 - 1)  # the bounds themselves are seeds
    parse_params(data, source="params.yaml")
    _set(data, key, 0)
    parse_params(data, source="params.yaml")


def test_a_bad_profile_name_is_one_short_line_from_the_command(good, tmp_path):
    """The curll command: exit 2 and one line naming the key and the value, not the whole params."""
    data = copy.deepcopy(good)
    data["evaluate"]["judges"] = ["ghost"]
    path = tmp_path / "params.yaml"
    dump_yaml(data, path)
    curll = Path(sys.executable).with_name("curll")
    proc = subprocess.run([str(curll), "params", "--params", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) < 300, proc.stderr
    assert "field 'evaluate.judges.0'" in lines[0] and "'ghost' is not one of llm.profiles" in lines[0]


def test_the_number_a_hint_advises_is_read_as_that_number(good, tmp_path):
    """The hint's spelling, unquoted, is what curll and DVC read as the number (YAML 1.2)."""
    for written in ("3e-3", "3e3", "1.5e3", "3.0e3", "0.5"):
        data = copy.deepcopy(good)
        data["train"]["optim"]["lr"] = written
        with pytest.raises(CurllError) as err:
            parse_params(data, source="params.yaml")
        advised = re.search(r"write (\S+) without quotes", err.value.message)
        assert advised is not None, err.value.message
        (tmp_path / "x.yaml").write_text(f"x: {advised[1]}\n")
        assert load_yaml(tmp_path / "x.yaml")["x"] == float(written)


def test_several_problems_are_one_line_keys_sharing_a_message_given_together(good):
    with pytest.raises(CurllError) as err:
        parse_params({"taxonomy": good["taxonomy"]}, source="params.yaml")
    text = str(err.value)
    assert "\n" not in text and err.value.field == "vocab"
    assert text.startswith("params.yaml, field 'vocab': required key is missing; also llm, llm_models, ")
    assert text.endswith(", evaluate: required key is missing")


def test_the_params_command_prints_the_loaded_params_as_json_on_stdout(tmp_path):
    curll = Path(sys.executable).with_name("curll")
    proc = subprocess.run([str(curll), "params", "--params", str(ROOT / "params.yaml")], capture_output=True,
                          text=True, check=True)  # fmt: skip
    shown = json.loads(proc.stdout)
    assert shown["vocab"]["stages"] == [0, 1, 2, 3, 4] and not proc.stderr.strip()


def test_task_sampling_changes_only_its_own_tasks(good):
    data = copy.deepcopy(good)
    data["llm"]["profiles"]["embedded"]["task_sampling"] = {
        "ir": {"frequency_penalty": 0.5, "temperature": 1.0}
    }
    profile = parse_params(data, source="params.yaml").llm.profiles["embedded"]
    base = profile.sampling.to_sampling()
    ir = profile.sampling_for("ir")
    assert (ir.frequency_penalty, ir.temperature) == (0.5, 1.0)
    assert (ir.top_p, ir.max_tokens, ir.seed, ir.presence_penalty) == (
        base.top_p,
        base.max_tokens,
        base.seed,
        0.0,
    )
    assert profile.sampling_for("cqa") == base


def test_passage_length_range_follows_the_llm_profile():
    words = load_params(ROOT / "params.yaml").verify.context_words
    assert (words.for_profile("vllm").min, words.for_profile("vllm").max) == (250, 500)  # the paper's
    assert words.for_profile("embedded").max < 250


def test_a_curriculum_of_your_own_and_other_stages_load(good):
    data = copy.deepcopy(good)
    columns = {"skill": "Subject", "goal": "Goal", "indicator": "Can do", "grade": "Year"}
    data["taxonomy"].update(layout="table", stages=[6, 7], columns=columns, grades={"K": 6, 1: 7, 2: None})
    data["vocab"]["stages"] = [6, 7, 8]
    data["train"]["stages"] = [7]
    t = parse_params(data).taxonomy
    assert t.grades == {"K": 6, "1": 7, "2": None}  # YAML's int key 1 is matched as the text "1"
    assert t.columns is not None and t.columns.subskill is None


def test_stages_are_sorted(good):
    data = copy.deepcopy(good)
    data["vocab"]["stages"] = [4, 3, 2, 1, 0]
    assert parse_params(data).vocab.stages == (0, 1, 2, 3, 4)


def test_train_budget_defaults_to_one_pass_of_data_and_rewarm(good):
    data = copy.deepcopy(good)
    for key in ("budget", "steps_per_stage"):
        data["train"].pop(key, None)
    data["train"]["optim"].pop("rewarm", None)
    p = parse_params(data).train
    assert (p.budget, p.steps_per_stage, p.optim.rewarm) == ("data", 0, True)
    data["train"].update(budget="steps", steps_per_stage=12)
    data["train"]["optim"].update(rewarm=False)
    p = parse_params(data).train
    assert (p.budget, p.steps_per_stage, p.optim.rewarm) == ("steps", 12, False)


def test_unreadable_params_files(tmp_path):
    with pytest.raises(CurllError, match="not found"):
        load_params(tmp_path / "nope.yaml")
    bad = tmp_path / "p.yaml"
    bad.write_text("taxonomy: [unclosed\n")
    with pytest.raises(CurllError, match="invalid YAML") as err:
        load_params(bad)
    assert "\n" not in str(err.value)  # one line: PyYAML's own message spans several
    bad.write_text("taxonomy:\n  a: 1\n\tb: 2\n")
    with pytest.raises(CurllError, match=r"row 3: invalid YAML: found character '\\t'") as err:
        load_params(bad)
    assert "\n" not in str(err.value)


def checked(data: dict[str, Any]) -> Params:
    """Params as the ``curll`` command takes them: validated, then the token budgets checked."""
    params = parse_params(data, source="params.yaml")
    check_budgets(params, "params.yaml")
    return params


def test_caps_that_cannot_close_inside_the_token_budget_are_refused(good):
    """The real profiles once had max_chars long 4,000 / short 600 with max_tokens 1,024: a
    passage at its cap could never close its JSON, so it ended unterminated and was rejected."""
    data = copy.deepcopy(good)
    data["llm"]["use"] = "vllm"
    data["llm"]["profiles"]["vllm"]["max_chars"] = {"long": 4000, "short": 600}
    with pytest.raises(
        CurllError, match=r"largest context answer is [\d,]+ characters .*max_tokens 1,024"
    ) as err:
        checked(data)
    assert err.value.field == "llm.profiles.vllm.max_chars"
    data["llm"]["profiles"]["vllm"]["sampling"]["max_tokens"] = 2048  # room for 6,167 characters of CQA
    assert checked(data).llm.profile.max_chars.long == 4000


def test_budget_counts_the_worst_case_json():
    from curll.llm.budget import UnboundedSchemaError, max_chars

    numbers = {"type": "array", "maxItems": 2, "items": {"type": "integer", "enum": [1, 22]}}
    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 5}, "b": numbers}}
    assert max_chars(schema) == len('{"a": "xxxxx", "b": [22, 22]}')
    with pytest.raises(UnboundedSchemaError, match=r"\$.a: a string without maxLength"):
        max_chars({"type": "object", "properties": {"a": {"type": "string"}}})


def test_judges_are_checked_against_their_own_budget(good):
    data = copy.deepcopy(good)
    data["evaluate"]["judges"] = ["embedded"]
    data["llm"]["profiles"]["embedded"]["sampling"]["max_tokens"] = 20
    data["evaluate"]["explain"] = True  # the rating alone fits any budget; its reason may not
    with pytest.raises(CurllError, match="judge rating") as err:
        checked(data)
    assert err.value.field == "llm.profiles.embedded.max_chars"


def test_the_rater_is_a_profile_in_use_checked_against_its_own_budget(good):
    data = copy.deepcopy(good)
    data["llm"]["use"] = "embedded"
    data["split"]["rater"] = "nope"
    with pytest.raises(CurllError, match=r"split\.rater': 'nope' is not one of llm\.profiles"):
        parse_params(data, source="params.yaml")
    data["split"]["rater"] = None  # never implied (it was llm.use's): dvc.yaml keys on its name
    with pytest.raises(CurllError, match=r"split\.rater"):
        parse_params(data, source="params.yaml")
    data["split"]["rater"] = "smollm2-torch"
    params = parse_params(data, source="params.yaml")
    assert params.split.rater == "smollm2-torch"
    assert "smollm2-torch" in params.profiles_in_use()
    data["llm"]["profiles"]["smollm2-torch"]["sampling"]["max_tokens"] = 20
    with pytest.raises(CurllError, match="quality rating") as err:
        checked(data)
    assert err.value.field == "llm.profiles.smollm2-torch.max_chars"


def test_a_key_given_twice_is_refused_naming_it_and_both_rows(tmp_path):
    """yaml.safe_load keeps the last value silently; DVC refuses such a file: so does curll."""
    text = (ROOT / "params.yaml").read_text()
    assert "\n  epochs: " in text
    path = tmp_path / "params.yaml"
    path.write_text(text.replace("\n  epochs: ", "\n  epochs: 1\n  epochs: ", 1))
    first = text[: text.index("\n  epochs: ")].count("\n") + 2
    message = rf"duplicate key 'train.epochs' \(rows {first} and {first + 1}\)"
    with pytest.raises(CurllError, match=message) as err:
        load_params(path)
    assert err.value.field == "train.epochs" and err.value.row == first + 1


def test_repeated_keys_in_lists_and_merges(tmp_path):
    ok = tmp_path / "ok.yaml"
    ok.write_text("base: &b {x: 1}\nuse:\n  <<: *b\n  x: 2\n")  # an override through a merge is fine
    assert load_yaml(ok)["use"] == {"x": 2}
    bad = tmp_path / "bad.yaml"
    bad.write_text("goals:\n  - skill: a\n    skill: b\n")
    with pytest.raises(CurllError, match=r"bad.yaml, row 3, field 'goals.0.skill'.*duplicate key"):
        load_yaml(bad)
    spelled = tmp_path / "spelled.yaml"  # two spellings of one key as loaded: the later would win
    spelled.write_text("indicators:\n  1:\n    - Attends\n  01:\n    - Follows\n")
    with pytest.raises(CurllError, match=r"duplicate key 'indicators.01' \(rows 2 and 4\)"):
        load_yaml(spelled)
    texts = tmp_path / "texts.yaml"  # a number and a string are two keys
    texts.write_text("indicators:\n  1: [a]\n  '1': [b]\n  =: [c]\n")
    assert load_yaml(texts) == {"indicators": {1: ["a"], "1": ["b"], "=": ["c"]}}
    odd = tmp_path / "odd.yaml"  # a key no dict can hold: YAML's own error, on one line
    odd.write_text("? !!seq x\n: 1\n")
    with pytest.raises(CurllError, match=r"odd.yaml, row 1: invalid YAML: expected a sequence node"):
        load_yaml(odd)


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [("verify", "semantic.threshold", "0.95"), ("verify", "min_yield", "x"), ("split", "max_holdout", "x"),
     ("split", "decontamination.threshold", [0.5])],
)  # fmt: skip
def test_a_key_typed_as_a_union_is_named_as_written_in_one_line(good, section, key, value):
    """pydantic names the union member after the key (``.float``, ``.function-after[...]``), once
    a member: the key is the one the user wrote, with one message."""
    data = copy.deepcopy(good)
    *path, last = key.split(".")
    node = data[section]
    for part in path:
        node = node[part]
    node[last] = value
    with pytest.raises(CurllError) as err:
        parse_params(data, source="params.yaml")
    assert err.value.field == f"{section}.{key}"
    assert "\n" not in err.value.message and "valid number" in err.value.message, err.value.message


@pytest.mark.parametrize(
    ("section", "key", "value", "field", "said"),
    [("train", "order", ["continual", "nope"], "train.order.1", "unknown order 'nope'"),
     ("evaluate", "min_yield", {"judgeA": 2}, "evaluate.min_yield.judgeA", "less than or equal to 1"),
     ("verify", "min_yield", {"ir": 1.5}, "verify.min_yield.ir", "less than or equal to 1")],
)  # fmt: skip
def test_a_bad_item_inside_a_union_typed_list_or_map_is_named_with_its_own_message(
    good, section, key, value, field, said
):
    """A list of orders and a map by name are documented forms: the item at fault is named,
    not the key with the scalar member's "should be a valid string"."""
    data = copy.deepcopy(good)
    data[section][key] = value
    with pytest.raises(CurllError) as err:
        parse_params(data, source="params.yaml")
    assert err.value.field == field and said in err.value.message and "\n" not in err.value.message


def test_yaml_is_read_as_dvc_reads_it(tmp_path):
    """DVC records params.yaml in dvc.lock as its own parser reads it (YAML 1.2): curll reads
    the same values, so what ran is what DVC records (YAML 1.1 would read 010 as 8, yes as True)."""
    from dvc.utils.serialize import parse_yaml

    text = ("a: 010\nb: yes\nc: off\nd: 0o10\ne: 1e-3\nf: 1_000\ng: 0x1F\nh: ~\ni: 2026-01-01\n"
            "j: .inf\nk: 'yes'\nl: [1, 2.5, no]\nm: {n: Null, o: TRUE}\n")  # fmt: skip
    path = tmp_path / "p.yaml"
    path.write_text(text)
    mine, dvcs = load_yaml(path), parse_yaml(text, str(path))
    assert mine == dvcs and {k: type(v) for k, v in mine.items()} == {k: type(v) for k, v in dvcs.items()}
    assert (mine["a"], mine["b"], mine["c"]) == (10, "yes", "off")


@pytest.mark.parametrize("text", ["a: 2024-02-30\n", "a: !!int 1.5\n"])
def test_a_value_no_type_holds_is_invalid_yaml_in_one_line(tmp_path, text):
    path = tmp_path / "params.yaml"
    path.write_text(text)
    with pytest.raises(CurllError, match=r"params.yaml: invalid YAML: ") as err:
        load_params(path)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("text", ["a: &x [*x]\n", "taxonomy: &t\n  a: *t\n"])
def test_an_anchor_used_inside_itself_is_one_line_naming_the_file(tmp_path, text):
    path = tmp_path / "params.yaml"
    path.write_text(text)
    with pytest.raises(CurllError, match=r"params.yaml, row \d: an anchor is used inside itself"):
        load_params(path)


def test_what_dump_yaml_writes_load_yaml_reads_back_as_written(tmp_path):
    """Text that YAML 1.2 would read as a number or stays text, numbers, nested lists: the DDP
    relaunch writes the params this way for its processes to read."""
    data = {"z": {"s": "1e3", "t": "0o10", "u": "yes", "v": 3e-3, "w": [1, "2", None]}, "a": True}
    dump_yaml(data, tmp_path / "p.yaml")
    back = load_yaml(tmp_path / "p.yaml")
    assert back == data and list(back) == ["z", "a"]  # keys in their order


def test_a_repeated_list_shows_its_value_once(good):
    """The section's message gives the value; the check's own words must not give it again."""
    for section, key in (("train", "seeds"), ("taxonomy", "stages")):
        data = copy.deepcopy(good)
        data[section][key] = [6, 6] if key == "stages" else [42, 42]
        with pytest.raises(CurllError) as err:
            parse_params(data)
        assert str(err.value).count("got") == 1 and "must not repeat" in str(err.value), err.value


def test_a_yaml_file_not_in_utf8_names_the_row_of_its_first_bad_byte(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_bytes("a: 1\nb: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(CurllError, match=r"not valid UTF-8 \(byte 0xe9\)") as err:
        load_yaml(path)
    assert err.value.row == 2
