"""`harness parity --osim FILE` end to end: the committed OpenSim user model (free root,
pin, slider, ball, weld and linear custom joints) passes stages 0-2 on MuJoCo, Pinocchio,
Crocoddyl, Drake and OpenSim itself (its custom joint's four-coordinate chain puts three
massless bodies in a row, which OpenSim takes only with the point masses its adapter
lends), and a file OpenSim cannot read is one line naming it, exit 2, no bundle."""
from __future__ import annotations

import json

from conftest import ROOT, run_cli

MODEL = ROOT / "tests" / "data" / "osim_user_model.osim"
ENGINES = "mujoco,pinocchio,crocoddyl,drake,opensim"


def test_parity_on_the_osim_user_model(tmp_path):
    out = tmp_path / "parity"
    p = run_cli("parity", "--osim", MODEL, "--engines", ENGINES, "--stages", "0,1,2",
                "--samples", "4", "--out", out, "--quiet", "--json", tmp_path / "s.json")
    assert p.returncode == 0, p.stdout + p.stderr
    records = json.loads((out / "records.json").read_text())
    rows = records["records"] if isinstance(records, dict) else records
    assert rows and all(r["fixture"] == "osim_user_model" for r in rows)
    assert {r["status"] for r in rows} <= {"passed", "not_provided"}
    pairs = {(r["engine_a"], r["engine_b"]) for r in rows if r["status"] == "passed"}
    named = {e for pair in pairs for e in pair} - {"declared"}  # stage 0 vs the spec
    assert named == set(ENGINES.split(","))
    stages = {r["stage"] for r in rows if r["status"] == "passed"}
    assert {"model_identity", "kinematics", "dynamics"} <= stages


def test_parity_refuses_a_bad_osim(tmp_path):
    bad = tmp_path / "bad.osim"
    bad.write_text('<OpenSimDocument Version="40600"><Model name="m"><BodySet>')
    out = tmp_path / "parity"
    p = run_cli("parity", "--osim", bad, "--out", out, "--quiet")
    assert p.returncode == 2
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and str(bad) in lines[0], p.stderr
    assert not out.exists()
