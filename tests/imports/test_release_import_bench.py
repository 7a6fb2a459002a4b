"""bench.release_import runs end to end on a small N (the benchmark page's numbers come from it)."""

from __future__ import annotations

from bench.release_import import main


def test_the_import_benchmark_measures_both_sizes_and_the_baseline():
    rows = main(["--rows", "4000"])
    assert [r["run"] for r in rows] == [
        "import, 1,000 rows", "import, 4,000 rows", "split's sample (200 test records), 4,000 rows",
        "baseline: pandas.read_parquet, 4,000 rows",
    ]  # fmt: skip
    assert all(not r["failed"] and r["peak_rss_gib"] > 0 and r["wall_s"] > 0 for r in rows)
