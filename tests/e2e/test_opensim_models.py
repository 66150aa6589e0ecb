"""OpenSim's standard models (data/opensim_models/, from OpenSim's model repository)
through `harness parity --osim` in every engine: each stage passes in each, or the run is
refused in one line naming the one element the harness cannot hold (exit 2, no bundle).

gait2392 and gait10dof18musc have a pelvis on a six-axis CustomJoint and knees whose two
translations are SimmSplines of the knee angle (each a joint of its own, held by a
coupling in stage 3); leg6dof9musc adds a patella whose coordinate follows the knee
through a CoordinateCouplerConstraint, and a toe body whose inertia violates the triangle
inequality (refused, or replaced with --repair-inertia); arm26 has two linear
CustomJoints; double_pendulum two point masses on PinJoints."""
from __future__ import annotations

import json

import pytest

from tests.conftest import ENGINES, ROOT, run_cli

DATA = ROOT / "data" / "opensim_models"
OK = {"passed", "not_provided", "informational"}


@pytest.mark.parametrize("name, extra, coupled", [
    ("gait2392_thelen2003muscle", (), ("knee_r_translation1", "knee_l_translation2")),
    ("gait10dof18musc", (), ("knee_r_translation1", "knee_l_translation2")),
    ("leg6dof9musc", ("--repair-inertia",), ("knee_r_translation1", "tib_pat_r_rotation1")),
    ("arm26", (), ()),
    ("double_pendulum", (), ()),
])
def test_every_stage_passes_in_every_engine(tmp_path, name, extra, coupled):
    out = tmp_path / "p"
    p = run_cli("parity", "--osim", DATA / f"{name}.osim", *extra, "--samples", "2",
                "--out", out, "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    rows = json.loads((out / "records.json").read_text())
    rows = rows["records"] if isinstance(rows, dict) else rows
    bad = [(r["id"], r["status"], r.get("reason", "")) for r in rows if r["status"] not in OK]
    assert not bad, bad
    passed = [r for r in rows if r["status"] == "passed"]
    assert {e for r in passed for e in (r["engine_a"], r["engine_b"])} >= set(ENGINES)
    stages = {r["stage"] for r in passed}
    assert {"model_identity", "kinematics", "dynamics"} <= stages
    if coupled:  # the couplings compared through every engine's KKT, OpenSim's native too
        assert "constrained" in stages
        line = next(x for x in p.stdout.splitlines() if ": couplings: " in x)
        assert all(f in line for f in coupled) and "KKT of 5 engines" in line, line
        assert "opensim:realizeAcceleration (exact)" in line, line
        native = [r for r in passed if r["id"].endswith("native_vdot/opensim:"
                                                       "realizeAcceleration")]
        assert native, "OpenSim's own coupling constraints were not scored"


def test_a_non_physical_inertia_is_refused_naming_the_body(tmp_path):
    path = DATA / "leg6dof9musc.osim"
    out = tmp_path / "p"
    p = run_cli("parity", "--osim", path, "--samples", "2", "--out", out, "--quiet")
    assert p.returncode == 2, p.stdout + p.stderr
    lines = [x for x in p.stderr.splitlines() if x.startswith("harness: error:")]
    assert len(lines) == 1 and str(path) in lines[0], p.stderr
    assert "body toes_r: inertia violates the triangle inequality" in lines[0]
    assert "--repair-inertia" in lines[0]
    assert not out.exists()
