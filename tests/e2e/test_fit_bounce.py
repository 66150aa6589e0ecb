"""`harness fit --problem bounce` as a user runs it (subprocess): candidate first-impact
onsets weighted by evidence, the restitution against the generating truth, the report's
schedules section, re-rendering, and bad input (exit 2, one line, nothing written)."""
from __future__ import annotations

import html
import json
import math

import numpy as np
import pytest

from harness.core.tolerances import lookup
from harness.fit import bounce as B
from tests.conftest import run_cli


def test_bounce_fit_writes_bundle(tmp_path):
    seed = 3  # seeds 0-4 are checked in-process by tests/unit/test_schedules.py
    out = tmp_path / "fit"
    proc = run_cli("fit", "--problem", "bounce", "--seed", seed, "--out", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["arrays.npz", "fit.json", "index.html",
                                                    "plotly.min.js"]
    doc = json.loads((out / "fit.json").read_text())
    assert doc["schema"] == "harness-fit" and doc["problem"] == "bounce" and doc["converged"]
    # the generating truth, computed independently of the bundle
    tau = (0.5 + math.sqrt(0.25 + 2 * 9.81 * 1.0)) / 9.81
    assert doc["truth"]["restitution"] == 0.8
    assert doc["truth"]["onset_s"] == pytest.approx(tau, abs=1e-12)
    sch = doc["schedules"]
    assert all({"impacts", "onset_s", "log_evidence", "log_prior", "weight"} <= set(r)
               for r in sch)
    w = np.array([r["weight"] for r in sch])
    assert abs(w.sum() - 1.0) <= lookup("schedules", "weights_sum").atol
    # three impacts (the truth's) selected; its onsets sorted around the true onset
    assert doc["impacts"]["selected"] == doc["selected"]["impacts"] == 3
    on = np.array([r["onset_s"] for r in sch if r["impacts"] == 3])
    assert np.all(np.diff(on) > 0) and on[0] < tau < on[-1]
    # weights are the normalised exponentials of the log evidences times the prior masses
    le = np.array([r["log_evidence"] + r["log_prior"] for r in sch])
    assert np.allclose(w, np.exp(le - le.max()) / np.exp(le - le.max()).sum(),
                       rtol=1e-12, atol=1e-300)
    # the onset to its own precision: its spread is the phase-aligned fit's SE
    o, po = doc["onset"], doc["phases_onset"]
    assert o["resolved"] and po["accepted"]
    assert abs(o["se_s"] - po["se_s"]) <= lookup("schedules", "onset_se_phases").atol * \
        po["se_s"]
    assert abs(o["value_s"] - tau) <= lookup("schedules", "onset_z").atol * o["se_s"]
    assert not doc["energy"]["gains_energy"]
    r = doc["restitution"]
    assert abs(r["value"] - 0.8) <= lookup("schedules", "restitution_z").atol * r["se"]
    assert "marginalised" in r["estimate"] and doc["marginalised"]["restitution"]["value"] \
        == r["value"]
    # the mixture mean and variance recomputed from the candidates
    ok = [x for x in sch if x["valid"] and x["impacts"] > 0]
    ww = np.array([x["weight"] for x in ok])
    ww /= ww.sum()
    ee = np.array([x["restitution"] for x in ok])
    ss = np.array([x["restitution_se"] for x in ok])
    mean = ww @ ee
    assert r["value"] == pytest.approx(mean, rel=1e-12)
    assert r["se"] == pytest.approx(math.sqrt(ww @ (ss ** 2 + ee ** 2) - mean ** 2), rel=1e-6)
    # events: the onset is assumed (the schedule's), later impacts inferred; none scored
    assert [e["label"] for e in doc["events"]] == ["assumed", "inferred", "inferred"]
    assert not any(e["scored"] for e in doc["events"])
    with np.load(out / "arrays.npz", allow_pickle=False) as a:
        assert a["y"].shape == (201, 1) and a["x_fit"].shape == (201, 2)
        t, y = a["t"], a["y"][:, 0]
        assert np.array_equal(a["weights"], w)
        # the data are the truth plus noise of the stated σ (seeded): residual χ² per sample
        # of the truth is near 1
        chi = ((y - a["x_true"][:, 0]) / doc["settings"]["sigma_m"]) ** 2
        assert 0.7 < chi.mean() < 1.3
        assert np.allclose(a["x_true"][:, 0], B.data(seed)[1], rtol=0, atol=1e-15)
        assert t[-1] == pytest.approx(2.0)
    page = (out / "index.html").read_text()
    for needle in ("Candidate schedules", 'id="schedules"', "Restitution",
                   'id="restitution-value"', 'src="plotly.min.js"'):
        assert needle in page, needle
    specs = [json.loads(html.unescape(s.split('"', 1)[0]))
             for s in page.split('data-spec="')[1:]]
    titles = {(s["layout"]["xaxis"]["title"]["text"], s["layout"]["yaxis"]["title"]["text"])
              for s in specs}
    assert ("first-impact onset [s]", "posterior weight [–]") in titles
    assert ("first-impact onset [s]", "log Z − max log Z [–]") in titles
    assert ("first-impact onset [s]", "restitution e [–]") in titles
    assert ("t [s]", "height [m]") in titles and ("t [s]", "velocity [m/s]") in titles
    # `harness report` re-renders the same page from fit.json and arrays.npz
    (out / "index.html").unlink()
    rep = run_cli("report", out, "--quiet")
    assert rep.returncode == 0, rep.stdout + rep.stderr
    assert (out / "index.html").read_text() == page


@pytest.mark.parametrize("args, needle", [
    (["--problem", "bounce", "--n", "300"], "--n"),
    (["--problem", "bounce", "--seed", "-1"], "--seed"),
    (["--problem", "bounce", "--method", "hermite_simpson"], "--method"),
])
def test_bounce_bad_input_exit_2_one_line(tmp_path, capsys, args, needle):
    """In-process (the subprocess path is exercised above): exit 2, one line, no folder."""
    from harness import cli

    out = tmp_path / "fit"
    rc = cli.main(["fit", *args, "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = [l for l in err.splitlines() if l.strip()]
    assert len(lines) == 1 and needle in lines[0]
    assert not out.exists()
