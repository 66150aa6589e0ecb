"""`harness synth`, `harness replay` and the replay checks of `harness qualify`, as a user
runs them (subprocesses, real engines)."""
from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest

from harness.core import io
from harness.core.tolerances import lookup
from tests.conftest import assert_known, reseal_arrays, run_cli
from tests.e2e.test_report_plots import chart_titles


def _one_line_error(proc):
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("harness: error: "), proc.stderr
    return lines[0]


def _rows(out):
    return [r for r in json.loads((out / "records.json").read_text()) if r["stage"] == "replay"]


@pytest.fixture(scope="module")
def chain7(tmp_path_factory):
    d = tmp_path_factory.mktemp("replay")
    cand = d / "chain7.json"
    s = run_cli("synth", "chain7", "--out", cand, "--duration", "2")
    assert s.returncode == 0, s.stdout + s.stderr
    out = d / "bundle"
    proc = run_cli("replay", cand, "--out", out, "--quiet")
    return cand, out, proc


def test_chain7_candidate_agrees_in_every_engine_over_two_seconds(chain7):
    cand, out, proc = chain7
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = _rows(out)
    traj = [r for r in rows if r["quantity"] == "trajectory"]
    engines = {"mujoco", "pinocchio", "crocoddyl", "drake", "opensim"}
    assert {frozenset((r["engine_a"], r["engine_b"])) for r in traj} == \
        {frozenset(p) for p in [(a, b) for a in engines for b in engines if a < b]}
    band = lookup("replay", "trajectory").atol
    assert all(r["status"] == "passed" and r["max_abs"] <= band for r in traj), traj
    assert all(r["n_samples"] == 201 for r in traj)  # the whole 2 s grid
    # every run passed its refinement gate; damping: energy balance with dissipated work
    assert {r["status"] for r in rows if r["quantity"] in ("refinement", "energy_balance")} \
        == {"passed"}
    assert all("dissipated" in r["reason"] and not r["reason"].startswith("dissipated 0 ")
               for r in rows if r["quantity"] == "energy_balance")
    native = {r["engine_a"]: r for r in rows if r["quantity"] == "native"}
    assert set(native) == engines
    # every row of the bundle (stages 0-2 and replay) passed, but the known disagreements
    # (Pinocchio has no native stepping; Crocoddyl no kinematics)
    assert_known(json.loads((out / "records.json").read_text()))
    m = json.loads((out / "manifest.json").read_text())
    case = m["replay"]["cases"]["chain7"]
    assert case["candidate"]["manifest_sha256"] and case["observer"]
    assert set(case["runs"]["native"]["engines"]) == {"mujoco", "crocoddyl", "drake", "opensim"}
    # stages 0-2 ran first on the candidate's model (replay is gated on them)
    assert any(r["stage"] == "dynamics" for r in json.loads((out / "records.json").read_text()))
    html = (out / "index.html").read_text()
    assert 'id="replay"' in html and "pointwise error" in html
    assert any(t.startswith("pointwise error") for t in chart_titles(html))
    assert "agreement horizon" in html


def test_replay_bundle_verifies_and_a_changed_trajectory_is_named(chain7, tmp_path):
    _, out, _ = chain7
    ok = run_cli("verify", out)
    assert ok.returncode == 0, ok.stdout
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    with np.load(copy / "arrays.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    key = "replay/chain7/rk4_dt=0.001/drake/x"
    arrays[key][150, 3] += 1e-7
    (copy / "arrays.npz").write_bytes(io.npz_bytes(arrays))
    bad = run_cli("verify", copy)  # the archive differs from its hash: never decompressed
    assert bad.returncode == 1 and "MISMATCH arrays.npz: file sha256 differs" in bad.stdout
    reseal_arrays(copy, arrays)  # the file's hash updated too
    bad = run_cli("verify", copy)
    assert bad.returncode == 1
    assert key in bad.stdout and "chain7/replay/rk4_dt=0.001/trajectory/mujoco~drake" in bad.stdout


def test_report_regenerates_the_replay_section(chain7, tmp_path):
    _, out, _ = chain7
    target = tmp_path / "r.html"
    proc = run_cli("report", out, "--out", target)
    assert proc.returncode == 0, proc.stderr
    assert 'id="replay-chain7"' in target.read_text()


def test_too_coarse_replay_is_unconverged_not_passed(chain7, tmp_path):
    cand, _, _ = chain7
    out = tmp_path / "coarse"
    proc = run_cli("replay", cand, "--out", out, "--dt", "0.01", "--no-native", "--quiet")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = _rows(out)
    gate = [r for r in rows if r["quantity"] == "refinement"]
    assert gate and all(r["status"] == "unconverged" and r["passed"] is None for r in gate)
    assert all(r["max_abs"] > lookup("replay", "refinement").atol for r in gate)
    # the engine pairs still agree with each other — but that is not a pass
    assert all(r["status"] == "unconverged" for r in rows if r["quantity"] == "trajectory")
    assert "UNCONVERGED" in proc.stdout and "unconverged" in proc.stdout
    assert run_cli("verify", out).returncode == 0
    html = (out / "index.html").read_text()
    assert "not qualified" in html and "unconverged" in html


def test_double_pendulum_shows_a_finite_horizon_and_growth_rate(tmp_path):
    cand = tmp_path / "dp.json"
    s = run_cli("synth", "double_pendulum", "--out", cand, "--law", "zero", "--q0", "1.5,3.0",
                "--v0=-4,2", "--duration", "8")
    assert s.returncode == 0, s.stderr
    out = tmp_path / "dp"
    proc = run_cli("replay", cand, "--out", out, "--score", "horizon", "--dt", "2e-3",
                   "--no-native", "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    traj = [r for r in _rows(out) if r["quantity"] == "trajectory"]
    finite = []
    for r in traj:
        assert r["status"] == "passed" and "predictability window" in r["reason"]
        assert r["n_samples"] < 801  # only the predictable part is scored, not a false pass
        m = re.search(r"agreement horizon ([\d.]+) s; log-error growth ([\d.]+) /s", r["reason"])
        if m:
            finite.append((float(m.group(1)), float(m.group(2))))
    # pinocchio and crocoddyl share arithmetic (error exactly 0); the others diverge
    assert len(finite) >= 4, traj
    for horizon, growth in finite:
        assert 1.0 < horizon < 8.0 and growth > 0.5
    html = (out / "index.html").read_text()
    assert "predictability window" in html and " /s" in html


def test_qualify_exits_1_when_a_replay_is_too_coarse(tmp_path):
    out = tmp_path / "q"
    proc = run_cli("qualify", "--out", out, "--coarse-replay", "--engines",
                   "pinocchio,mujoco", "--quiet")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = _rows(out)
    bad = {r["id"] for r in rows if r["status"] == "unconverged"}
    assert bad and all(i.startswith("chain7/") for i in bad), bad
    others = [r for r in rows if not r["id"].startswith("chain7/")]
    assert others
    assert_known(others)
    orders = [r for r in rows if r["quantity"] == "convergence_order"]
    assert len(orders) == 4 and all(r["status"] == "passed" for r in orders)


BAD = [
    (["replay", "/nonexistent/c.json"], "/nonexistent/c.json"),
    (["synth", "nope", "--out", "{d}/c.json"], "unknown fixture"),
    (["synth", "free_body", "--law", "pd", "--out", "{d}/c.json"], "fixed base"),
    (["synth", "pendulum", "--q0", "1,2", "--out", "{d}/c.json"], "--q0"),
    (["synth", "pendulum", "--duration", "-1", "--out", "{d}/c.json"], "--duration"),
]


@pytest.mark.parametrize("args,needle", BAD, ids=[" ".join(a[:2]) for a, _ in BAD])
def test_bad_input_exit_2_one_line(tmp_path, args, needle):
    proc = run_cli(*[a.format(d=tmp_path) for a in args])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert needle in _one_line_error(proc)
    assert not (tmp_path / "c.json").exists()


def test_bad_candidate_and_bad_step_exit_2(chain7, tmp_path):
    cand, _, _ = chain7
    copy = tmp_path / "c.json"
    shutil.copy(cand, copy)
    shutil.copy(cand.with_suffix(".npz"), copy.with_suffix(".npz"))
    m = json.loads(copy.read_text())
    m["joints"][0] = "no_such_joint"
    copy.write_text(json.dumps(m))
    out = tmp_path / "out"
    proc = run_cli("replay", copy, "--out", out)
    assert proc.returncode == 2 and "no_such_joint" in _one_line_error(proc)
    proc = run_cli("replay", cand, "--out", out, "--dt", "0")
    assert proc.returncode == 2 and "--dt" in _one_line_error(proc)
    assert not out.exists()
