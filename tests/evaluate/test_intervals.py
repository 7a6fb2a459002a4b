"""Bootstrap intervals: stratified, seeded draws; a planted effect is found and a null is not."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from curll.evaluate.intervals import bootstrap, item_weights, seed_weights, single_item_strata
from curll.evaluate.values import loss_values


def test_each_replicate_draws_every_stratum_to_its_size_and_the_seed_fixes_it():
    items = pd.DataFrame(
        {"item_id": [f"i{k}" for k in range(7)], "stage": [0, 0, 0, 1, 1, 1, 1], "type": "ir"}
    )
    w = item_weights(items, 50, seed=3)
    assert (
        w.shape == (7, 50) and (w.loc[["i0", "i1", "i2"]].sum() == 3).all() and (w.iloc[3:].sum() == 4).all()
    )
    assert w.equals(item_weights(items, 50, seed=3)) and not w.equals(item_weights(items, 50, seed=4))
    assert w.to_numpy().std() > 0  # not all ones


def losses(
    rise: float, seed: int, *, seeds: dict[int, float] | None = None, noise: float = 0.3
) -> pd.DataFrame:
    """Continual models 0 and 0-1 on 30 test records per stage; each record has its own
    difficulty, and model 0-1's loss on stage 0 is model 0's plus ``rise`` plus noise.
    ``seeds``: training seed -> its own extra rise (default: one seed, 42, none)."""
    rng = np.random.default_rng(seed)
    rows = []
    for stage in (0, 1):
        for k in range(30):
            base = 4.0 + rng.normal(0, 1.0)
            for s, extra in (seeds or {42: 0.0}).items():
                up = rise + extra + rng.normal(0, noise)
                after = {0: base + up, 1: base - 0.5 + rng.normal(0, noise)}[stage]
                before = base if stage == 0 else base + 1.0
                for run, t, v in (
                    (f"seed-{s}/continual/0", 0, before),
                    (f"seed-{s}/continual/0-1", 1, after),
                ):
                    rows.append({"record_id": f"{stage}-{k}", "split": "test", "stage": stage, "type": "ir",
                                 "run": run, "order": "continual", "seed": s, "trained_to": t,
                                 "nll": 10 * v, "tokens": 10, "unigram_nll": 50.0})  # fmt: skip
    return pd.DataFrame(rows)


def keys_of(rows: pd.DataFrame) -> pd.DataFrame:
    return (
        rows[["record_id", "stage", "type"]]
        .drop_duplicates("record_id")
        .rename(columns={"record_id": "item_id"})
    )


def fgt(rows: pd.DataFrame, w: np.ndarray) -> dict[str, np.ndarray]:
    return loss_values(rows, w, ["ir"])


@pytest.mark.parametrize(("rise", "found"), [(0.4, True), (0.0, False)])
def test_a_planted_rise_in_loss_is_found_and_a_null_is_not(rise, found):
    rows = losses(rise, seed=11)
    keys = keys_of(rows)
    iv = bootstrap(rows, {"record_id": item_weights(keys, 300, seed=5)}, fgt)["continual/ir/FGT_nll_rise"]
    assert iv.lo is not None and iv.hi is not None and iv.value is not None
    assert iv.lo <= iv.value <= iv.hi and iv.hi - iv.lo < 0.4  # paired: record difficulty cancels out
    assert (iv.lo > 0) is found and (iv.lo <= 0 <= iv.hi) is not found
    cell = bootstrap(rows, {"record_id": item_weights(keys, 300, seed=5)}, fgt)["cell/continual/ir/1/0"]
    assert (
        cell.lo is not None and cell.hi is not None and cell.hi - cell.lo > iv.hi - iv.lo
    )  # a cell alone carries the spread of record difficulty


def test_a_value_of_one_item_strata_gets_no_interval_not_a_width_of_zero():
    """With one test item per stage and type every replicate redraws that item: the value never
    moves, which says nothing about its uncertainty (the judge of the default slice had 1 item per cell)."""
    rows = losses(0.4, seed=1)
    rows = rows[rows["record_id"].isin(["0-0", "1-0"])]  # one record per stage
    keys = keys_of(rows)
    assert single_item_strata(keys) == ["0/ir", "1/ir"]
    iv = bootstrap(rows, {"record_id": item_weights(keys, 50, seed=5)}, fgt)["continual/ir/FGT_nll_rise"]
    assert iv.value is not None and iv.lo is None and iv.hi is None


def test_seed_draws_take_as_many_seeds_as_were_trained_and_one_seed_is_never_redrawn():
    w = seed_weights([42, 43, 44], 40, seed=3)
    assert w.shape == (3, 40) and (w.sum() == 3).all() and w.to_numpy().std() > 0
    assert w.equals(seed_weights([42, 43, 44], 40, seed=3)) and not w.equals(
        seed_weights([42, 43, 44], 40, seed=4)
    )
    assert (seed_weights([42], 40, seed=3) == 1).all().all()


def test_an_effect_carried_by_one_seed_is_not_an_effect_once_seeds_are_resampled():
    """Three seeds whose forgetting differs (+1.2, -0.9, 0.0: mean +0.1) over items that agree
    within each seed: over items alone the +0.1 looks certain; over seeds too it is not."""
    rows = losses(0.0, seed=2, seeds={42: 1.2, 43: -0.9, 44: 0.0}, noise=0.05)
    items = {"record_id": item_weights(keys_of(rows), 300, seed=5)}
    name = "continual/ir/FGT_nll_rise"
    narrow = bootstrap(rows, items, fgt)[name]
    wide = bootstrap(rows, {**items, "seed": seed_weights([42, 43, 44], 300, seed=5)}, fgt)[name]
    assert narrow.value == wide.value and narrow.lo is not None and narrow.lo > 0  # items alone: "found"
    assert wide.lo is not None and wide.hi is not None and wide.lo <= 0 <= wide.hi


def test_one_item_strata_get_no_interval_even_when_the_seeds_draw_moves_the_value():
    """Three seeds that differ move the value in every seed draw; with one item per stage and
    type no draw can say how much the items would move it, so there is still no interval."""
    rows = losses(0.4, seed=1, seeds={42: 1.2, 43: -0.9, 44: 0.0})
    rows = rows[rows["record_id"].isin(["0-0", "1-0"])]
    weights = {
        "record_id": item_weights(keys_of(rows), 200, seed=5),
        "seed": seed_weights([42, 43, 44], 200, seed=5),
    }
    name = "continual/ir/FGT_nll_rise"
    assert bootstrap(rows, weights, fgt)[name].lo is not None  # the seeds' spread alone makes one
    iv = bootstrap(rows, weights, fgt, items="record_id")[name]
    assert iv.value is not None and iv.lo is None and iv.hi is None and iv.p is None
    two = losses(0.4, seed=1, seeds={42: 1.2, 43: -0.9, 44: 0.0})  # 30 items a stratum: an interval
    both = {
        "record_id": item_weights(keys_of(two), 200, seed=5),
        "seed": seed_weights([42, 43, 44], 200, seed=5),
    }
    assert bootstrap(two, both, fgt, items="record_id")[name].lo is not None


def test_a_value_some_replicate_leaves_undefined_gets_no_interval():
    rows = losses(0.4, seed=1)
    weights = {"record_id": item_weights(keys_of(rows), 100, seed=5)}

    def sometimes(r: pd.DataFrame, w: np.ndarray) -> dict[str, np.ndarray]:
        out = fgt(r, w)["continual/ir/FGT_nll_rise"].copy()
        if w.shape[1] > 1:
            out[::7] = np.nan  # one replicate in seven lacks it
        return {"always": fgt(r, w)["continual/ir/FGT_nll_rise"], "sometimes": out}

    got = bootstrap(rows, weights, sometimes)
    assert got["always"].lo is not None
    assert got["sometimes"].value == got["always"].value and got["sometimes"].lo is None


def test_a_model_missing_a_seed_is_refused_naming_the_bootstrap_key():
    from curll.errors import CurllError
    from curll.evaluate.intervals import crossed

    rows = losses(0.4, seed=1, seeds={42: 0.0, 43: 0.0})
    rows = rows[~((rows["seed"] == 43) & (rows["trained_to"] == 1))]
    with pytest.raises(
        CurllError, match=r"evaluate\.bootstrap\.samples.*continual trained to 1: seeds \[42\] of \[42, 43\]"
    ):
        crossed(rows, "record_id", 50, 1, fgt)
    assert crossed(rows, "record_id", 0, 1, fgt) == {}


def test_a_cell_counts_the_degrees_of_freedom_of_its_own_items():
    """A judge cell of 2 items in one stratum has 1 degree of freedom, not the family's 15: its
    interval is as wide as so few items allow; a metric over every item keeps the family's."""
    from curll.evaluate.intervals import cell_df

    keys = pd.DataFrame({"item_id": [f"i{k}" for k in range(18)], "stage": [k // 6 for k in range(18)],
                         "type": ["ir", "ir", "cqa", "cqa", "csqa", "csqa"] * 3})  # fmt: skip
    df = cell_df(keys, seeds=1, family=15.0)
    assert df("cell/joint/ir/2/1") == 1.0 and df("paired/joint-continual/sum/0/2") == 3.0
    assert (
        df("cell/joint/all/-1/0") == 3.0 and df("joint/ir/AP") == 15.0 and df("diff/a-b/all/mean_nll") == 15.0
    )
    assert cell_df(keys, seeds=3, family=2.0)("cell/joint/sum/1/1") == 2.0  # at most seeds - 1
    rows = losses(0.4, seed=1)
    weights = {"record_id": item_weights(keys_of(rows), 200, seed=5)}
    family = bootstrap(rows, weights, fgt, df=15.0)["cell/continual/ir/1/0"]
    own = bootstrap(rows, weights, fgt, df=lambda name: 1.0 if name.startswith("cell/") else 15.0)
    assert (
        own["continual/ir/FGT_nll_rise"]
        == bootstrap(rows, weights, fgt, df=15.0)["continual/ir/FGT_nll_rise"]
    )
    width = own["cell/continual/ir/1/0"]
    assert width.lo is not None and family.lo is not None and width.hi is not None and family.hi is not None
    assert (width.hi - width.lo) / (family.hi - family.lo) == pytest.approx(12.706 / 2.131, rel=1e-3)


def test_a_value_whose_items_all_agree_gets_no_interval_though_round_off_moves_its_replicates():
    """Every record's loss rises by exactly the same amount (per token 0.1, token counts that
    differ): the weighted sums differ in their last bits from replicate to replicate, which is no
    spread of the items, so no interval and no p-value (before, a width of 0 and p ~ 1e-78)."""
    rng = np.random.default_rng(0)
    rows = losses(0.4, seed=1)
    tokens = {r: int(t) for r, t in zip(rows["record_id"].unique(), rng.integers(3, 40, 60), strict=True)}
    rows["tokens"] = rows["record_id"].map(tokens)
    rows["nll"] = rows["tokens"] * np.where(rows["trained_to"] == 1, 0.3, 0.1)  # agree on every record
    rows["unigram_nll"] = rows["tokens"] * 0.8
    bounds = bootstrap(rows, {"record_id": item_weights(keys_of(rows), 200, seed=5)}, fgt)
    rise = bounds["continual/ir/FGT_nll_rise"]
    assert rise.value == pytest.approx(0.2) and (rise.lo, rise.hi, rise.p) == (None, None, None)
    gain = bounds["gain/continual/ir/0/0"]
    assert gain.value == pytest.approx(0.7) and gain.p is None
    rows.loc[rows["record_id"] == "0-3", "nll"] *= 1.5  # one record disagrees: a spread to estimate
    moved = bootstrap(rows, {"record_id": item_weights(keys_of(rows), 200, seed=5)}, fgt)
    assert moved["continual/ir/FGT_nll_rise"].p is not None


def test_orders_trained_to_other_stages_get_no_paired_difference():
    """A mean over stages 0-1 against one over 0-2 differs by stage 2's difficulty, not by the
    order: no difference is computed (before, it was a claim that held)."""
    rows = losses(0.0, seed=2)
    joint = rows.assign(order="joint", run=rows["run"].str.replace("continual", "joint"))
    both = pd.concat([rows, joint], ignore_index=True)
    w = np.ones((len(both), 1))
    assert "diff/joint-continual/ir/mean_nll" in loss_values(both, w, ["ir"])
    more = joint[joint["trained_to"] == 1].assign(trained_to=2, stage=2, run="seed-42/joint/0-1-2",
                                                  record_id=lambda d: "2-" + d["record_id"])  # fmt: skip
    uneven = pd.concat([both, more], ignore_index=True)
    got = loss_values(uneven, np.ones((len(uneven), 1)), ["ir"])
    assert "joint/ir/mean_nll" in got and not any(k.startswith("diff/") for k in got)
