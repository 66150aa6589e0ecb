"""`harness fit --problem bounce2` as a user runs it (subprocess): two balls, the order of
their first impacts weighed by evidence, the bundle and its report; bad input exits 2 in
one line with nothing written."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from harness.core.tolerances import lookup
from tests.conftest import run_cli


def test_bounce2_fit_writes_bundle_and_report(tmp_path):
    out = tmp_path / "fit"
    proc = run_cli("fit", "--problem", "bounce2", "--seed", 6, "--out", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "first impacts A first" in proc.stdout
    assert sorted(p.name for p in out.iterdir()) == ["arrays.npz", "fit.json", "index.html",
                                                    "plotly.min.js"]
    doc = json.loads((out / "fit.json").read_text())
    assert doc["problem"] == "bounce2" and doc["converged"]
    # the generating balls' first impacts in closed form: A (1 m, +0.5 m/s) before B
    # (1.4 m from rest)
    tA = (0.5 + math.sqrt(0.25 + 2 * 9.81 * 1.0)) / 9.81
    tB = math.sqrt(2 * 1.4 / 9.81)
    assert doc["truth"]["balls"]["A"]["onset_s"] == pytest.approx(tA, abs=1e-12)
    assert doc["truth"]["balls"]["B"]["onset_s"] == pytest.approx(tB, abs=1e-12)
    assert doc["order"]["truth"] == doc["order"]["selected"] == "A first"
    w = np.array([r["weight"] for r in doc["schedules"]])
    assert abs(w.sum() - 1.0) <= lookup("schedules", "weights_sum").atol
    assert doc["order"]["weight"] >= 1.0 - lookup("schedules", "selected_order_weight").atol
    assert {"value", "se"} <= set(doc["restitution"]["A"])
    page = (out / "index.html").read_text()
    assert page.index('id="order-answer"') < page.index('id="balls"')   # answer first
    (out / "index.html").unlink()
    rep = run_cli("report", out, "--quiet")
    assert rep.returncode == 0, rep.stdout + rep.stderr
    assert (out / "index.html").read_text() == page


@pytest.mark.parametrize("args, needle", [
    (["--problem", "bounce2", "--n", "300"], "--n"),
    (["--problem", "bounce2", "--seed", "-1"], "--seed"),
    (["--problem", "bounce2", "--method", "phases"], "--method"),
    (["--problem", "bounce2", "--event", "impact1=0.5"], "--event"),
])
def test_bounce2_bad_input_exit_2_one_line(tmp_path, capsys, args, needle):
    """In-process: exit 2, one line naming the option, no folder."""
    from harness import cli

    out = tmp_path / "fit"
    rc = cli.main(["fit", *args, "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], lines
    assert not out.exists()
