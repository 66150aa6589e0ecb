"""`harness fit --problem pendulum --study resolution` as a user runs it (subprocess): the
bundle gets fit.json's ``study`` section (grid, every setting's components and held-out
score, the choice and its uncertainty), the study arrays and a report section with its
charts; `harness report` re-renders the same page; bad options exit 2 with one line and
no files."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import run_cli

GRID = ("--knot-frames", "2,8,32", "--w-smooth", "1e-8,1e-5,1e-2", "--w-effort", "0",
        "--w-prior", "1")


def test_study_bundle(tmp_path):
    out = tmp_path / "study"
    proc = run_cli("fit", "--problem", "pendulum", "--n", "200", "--seed", "1", "--study",
                   "resolution", *GRID, "--out", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "study resolution: 9 settings; chosen" in proc.stdout
    doc = json.loads((out / "fit.json").read_text())
    st = doc["study"]
    assert st["grid"] == {"knot_frames": [2, 8, 32], "w_effort": [0.0],
                          "w_smooth": [1e-8, 1e-5, 1e-2], "w_prior": [1.0]}
    rows = st["settings"]
    assert len(rows) == 9 and st["converged"]
    for r in rows:   # every component reported separately, and they make the objective
        comp = r["components"]
        assert set(comp) == {"measurement", "effort", "smoothness", "prior", "total"}
        assert comp["total"] == pytest.approx(comp["measurement"] + comp["effort"]
                                              + comp["smoothness"] + comp["prior"])
        assert comp["effort"] == 0.0 and len(r["cv_folds"]) == st["folds"]["k"]
        assert r["cv_mean"] == pytest.approx(np.mean(r["cv_folds"]), rel=1e-12)
    ch = st["choice"]
    assert ch["index"] in ch["within_one_se"] and ch["cv_min_index"] in ch["within_one_se"]
    assert ch["setting"] == {k: rows[ch["index"]][k] for k in
                             ("knot_frames", "w_effort", "w_smooth", "w_prior")}
    lo, hi = ch["ranges_within_one_se"]["knot_frames"]
    assert lo <= ch["setting"]["knot_frames"] <= hi
    # the choice recovers the true control and angle better than both corners of the grid
    ext = st["extremes"]
    assert st["problem"]["seed"] == 1
    for q in ("u_rms_rad_s2", "theta_rms_rad"):
        err = [r["truth_error"][q] for r in rows]
        assert err[ch["index"]] < min(err[ext["least_regularised"]],
                                      err[ext["most_regularised"]]), q
    with np.load(out / "arrays.npz", allow_pickle=False) as a:
        assert a["study_u_fit"].shape == (st["problem"]["N"],)
        assert a["study_f_hz"].shape == a["study_psd_floor"].shape == a["study_psd_fit"].shape
        assert a["x_fit"].shape == (200, 2)   # the benchmark fit is still there
    html = (out / "index.html").read_text()
    for needle in ('id="study"', 'href="#study"', "Every setting"):
        assert needle in html, needle
    for needle in ("held-out score", "L-curve", "control spectrum and the noise floor",
                   "[(rad/s²)²/Hz]", "w_smooth [s⁶/rad²]", "frequency [Hz]"):
        # chart titles and axis titles with their units, as the page's chart specs hold them
        assert needle in html or json.dumps(needle)[1:-1] in html, needle
    (out / "index.html").unlink()
    rep = run_cli("report", out, "--quiet")
    assert rep.returncode == 0, rep.stdout + rep.stderr
    assert (out / "index.html").read_text() == html


@pytest.mark.parametrize("args, needle", [
    (["--problem", "pendulum", "--w-smooth", "1e-3"], "--w-smooth"),
    (["--problem", "balance", "--study", "resolution"], "--study"),
    (["--problem", "pendulum", "--study", "resolution", "--knot-frames", "0"],
     "--knot-frames"),
])
def test_bad_study_options(tmp_path, args, needle):
    out = tmp_path / "bad"
    proc = run_cli("fit", *args, "--out", out)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0]
    assert not out.exists()
