"""`harness fit` as a user runs it (subprocess): a small pendulum fit writes its bundle
and exits 0; bad arguments exit 2 with one line and no files."""
from __future__ import annotations

import json

import numpy as np
import pytest

from harness.core.tolerances import lookup
from tests.conftest import run_cli


def test_pendulum_fit_writes_bundle(tmp_path):
    out = tmp_path / "fit"
    proc = run_cli("fit", "--problem", "pendulum", "--n", "1000", "--p0", "60", "--out", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["arrays.npz", "fit.json", "index.html",
                                                    "plotly.min.js"]
    doc = json.loads((out / "fit.json").read_text())
    assert doc["schema"] == "harness-fit" and doc["converged"]
    p = doc["parameters"]["p"]
    acc = lookup("fit", "pendulum_p_n1000")
    assert abs(p["value"] / 10.0 - 1.0) <= acc.atol  # a relative-error threshold
    comp = doc["objective_components"]
    assert comp["total"] == pytest.approx(sum(comp[k] for k in
                                              ("measurement", "effort", "smoothness", "prior")))
    # the default solver is the banded SQP; its optimum is IPOPT's (--solver ipopt), the
    # KKT conditions of one NLP met by two independent solvers
    sol = doc["solver"]
    assert sol["id"] == "sqp" and "ipopt" not in doc and not sol["warnings"]
    assert doc["history"] and sol["iterations"] == len(doc["history"]) - 1
    ip = tmp_path / "ipopt"
    proc = run_cli("fit", "--problem", "pendulum", "--n", "1000", "--p0", "60", "--solver",
                   "ipopt", "--out", ip)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc_i = json.loads((ip / "fit.json").read_text())
    assert doc_i["solver"]["id"] == "ipopt" and doc_i["ipopt"]["iterations"] >= 1
    same = lookup("fit", "same_optimum").atol   # a threshold on |p/p_ref − 1|
    assert abs(doc_i["parameters"]["p"]["value"] / p["value"] - 1.0) <= same
    assert "banded SQP" in (out / "index.html").read_text()
    assert doc["candidate"]["written"] is False and "fixture" in doc["candidate"]["reason"]
    with np.load(out / "arrays.npz", allow_pickle=False) as a:
        assert a["x_fit"].shape == (1000, 2) and a["e"].shape == (1000, 1)
        # the whitened residuals are the measurement residuals over σ
        tol = lookup("fit", "whitened_residuals")
        assert np.allclose(a["e"][:, 0], (a["x_fit"][:, 0] - a["y"][:, 0]) / 0.05,
                           rtol=tol.rtol, atol=tol.atol)
    html = (out / "index.html").read_text()
    assert 'class="plot"' in html and "Objective components" in html \
        and "Convergence history" in html and 'src="plotly.min.js"' in html
    # `harness report` re-renders a fit bundle from what it holds: the same page, byte for
    # byte (fit.json and arrays.npz carry everything the report shows)
    (out / "index.html").unlink()
    (out / "plotly.min.js").unlink()
    rep = run_cli("report", out, "--quiet")
    assert rep.returncode == 0, rep.stdout + rep.stderr
    assert (out / "index.html").read_text() == html and (out / "plotly.min.js").is_file()
    alone = tmp_path / "alone.html"
    assert run_cli("report", out, "--out", alone, "--quiet").returncode == 0
    text = alone.read_text()
    assert 'src="plotly.min.js"' not in text and "Convergence history" in text
    assert len(text) > len(html) + 4_000_000  # the chart library embedded
    # a fit.json that is not a fit document is refused in one line, nothing written
    (out / "fit.json").write_text('{"schema": "something else"}')
    (out / "index.html").unlink()
    bad = run_cli("report", out)
    assert bad.returncode == 2 and "fit.json" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and not (out / "index.html").exists()


@pytest.mark.parametrize("args, needle", [
    (["--problem", "pendulum", "--n", "3"], "--n"),
    (["--problem", "pendulum", "--process-noise"], "--process-noise"),
    (["--problem", "balance", "--p0", "3"], "--p0"),
])
def test_bad_input_exit_2_one_line(tmp_path, args, needle):
    out = tmp_path / "fit"
    proc = run_cli("fit", *args, "--out", out)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("harness: error: ") and needle in lines[0]
    assert not out.exists()


def test_out_is_a_file_exit_2(tmp_path):
    f = tmp_path / "file.txt"
    f.write_text("keep")
    proc = run_cli("fit", "--problem", "pendulum", "--out", f)
    assert proc.returncode == 2 and "not a folder" in proc.stderr
    assert f.read_text() == "keep"


def test_unknown_problem_exit_2(tmp_path):
    proc = run_cli("fit", "--problem", "cartpole", "--out", tmp_path / "x")
    assert proc.returncode == 2
    assert not (tmp_path / "x").exists()
