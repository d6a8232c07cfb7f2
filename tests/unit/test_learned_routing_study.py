"""The learned-routing study's figure draws every arm but the default on every split it was given."""

import pandas as pd

from toolroute_lab.studies.learned_routing import plot


def test_the_figure_is_written_for_each_arm_and_split(tmp_path):
    rows = []
    for arm in ("default", "classifier", "hybrid+classifier@1"):
        for split, n in (("dev", 90), ("tune", 80), ("dev+tune", 170), ("test", 267)):
            rows.append({"arm": arm, "split": split, "n": n, "right_call_diff": 0.01, "right_call_diff_lo": -0.01,
                         "right_call_diff_hi": 0.03})
    path = plot(pd.DataFrame(rows), tmp_path / "f.png")
    assert path.stat().st_size > 10_000
