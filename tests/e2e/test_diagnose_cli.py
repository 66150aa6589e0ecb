"""`harness diagnose` and `harness parity --as-is` as a user runs them (subprocesses, real
engines), on the Panda arm from example-robot-data loaded as shipped."""
from __future__ import annotations

import json
import re

import pytest

from harness import api
from harness.core import known
from harness.core.tolerances import lookup
from harness.model.as_is import load_as_is
from harness.stages.diagnosis import ablation as diag_ablation
from harness.stages.diagnosis import summary as diag_summary
from tests.conftest import assert_known, run_cli
from tests.e2e.test_cli import _erd, _one_line_error

PANDA = "panda_description/urdf/panda.urdf"
EXPLAINS = 1 - lookup("diagnosis", "explained_share").atol
# pin.aba / Crocoddyl apply no joint damping as-is (a known disagreement)
PIN_SIDE = set(known.entry("as_is_damping_not_applied").engines)


def _summary(out):
    b = api.read_bundle(out)
    (s,) = diag_summary.summarise(b.records, b.arrays)
    return b, s


@pytest.fixture(scope="module")
def panda(tmp_path_factory):
    out = tmp_path_factory.mktemp("diag") / "panda"
    proc = run_cli("diagnose", _erd(PANDA), "--out", out, "--quiet")
    return proc, out


def test_panda_as_is_names_damping_with_its_measured_share(panda):
    proc, out = panda
    assert proc.returncode == 0, proc.stdout + proc.stderr
    b, s = _summary(out)
    by = {f["cause"]: f for f in s["findings"]}
    damping = by["damping"]
    assert damping["verdict"] == "explains"
    assert set(damping["elements"]) >= {f"panda_joint{i}" for i in range(1, 8)}
    assert "0.003 N·m·s/rad" in damping["evidence"]
    # the Pinocchio-vs-others difference: Pinocchio (and Crocoddyl) against Drake is
    # damping alone (≥ 99 % of it); against MuJoCo damping shares it with MuJoCo's mimic
    # equality on the gripper (the file's <mimic>: enforced by MuJoCo only)
    pin_drake = [e for e in damping["effects"] if set(e["pair"].split("~")) & PIN_SIDE
                 and "drake" in e["pair"]]
    assert {e["quantity"] for e in pin_drake} == {"forward_dynamics", "inverse_dynamics"}
    assert all(e["share"] >= EXPLAINS for e in pin_drake), pin_drake
    assert re.search(r"joint damping \[explains\]", proc.stdout)
    assert re.search(r"pinocchio~drake\s+forward_dynamics\s+\S+ of \S+ .*\(100\.0 %\)",
                     proc.stdout), proc.stdout
    # nothing spurious: only measured causes, each one real; every difference explained
    assert {f["cause"] for f in s["causes"]} == {"damping", "couplings"}
    coupling = by["couplings"]
    assert coupling["elements"] == ["panda_finger_joint2"]
    assert all("mujoco" in e["pair"] for e in coupling["effects"])
    assert all(f.get("structural") for f in s["latent"]), s["latent"]
    assert not s["unexplained"] and not s["failed"]
    assert "every difference is explained" in proc.stdout


def test_panda_diagnosis_bundle_verifies_and_reports_why(panda, tmp_path):
    _, out = panda
    ok = run_cli("verify", out)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    html = (out / "index.html").read_text()
    assert 'id="diagnosis"' in html and "Why the engines disagree" in html
    assert "joint damping" in html and "share" in html
    # regenerated from the bundle alone: the same section
    target = tmp_path / "again.html"
    assert run_cli("report", out, "--out", target).returncode == 0
    again = target.read_text()

    def section(t):
        start = t.index('<section id="diagnosis">')
        return t[start:t.index("</section>", start)]

    assert section(again) == section(html)


def test_panda_arm_without_gripper_is_damping_alone(tmp_path):
    """The Panda arm with its gripper removed: damping is the only cause and explains
    ≥ 99 % of every Pinocchio-vs-others difference."""
    text = _erd(PANDA).read_text()
    text = re.sub(r'<link name="panda_(left|right)finger">.*?</link>', "", text, flags=re.S)
    text = re.sub(r'<joint name="panda_finger_joint[12]".*?</joint>', "", text, flags=re.S)
    arm = tmp_path / "panda_arm.urdf"
    arm.write_text(text)
    from tests.conftest import ENGINES

    (s,) = diag_ablation.run([load_as_is(arm)], ENGINES, samples=6).summaries
    assert [f["cause"] for f in s["causes"]] == ["damping"]
    effects = s["causes"][0]["effects"]
    assert len(effects) == s["differences"] > 0
    assert all(set(e["pair"].split("~")) & PIN_SIDE for e in effects)
    assert all(e["share"] >= EXPLAINS for e in effects)


def test_parity_as_is_runs_stages_0_to_2_and_the_diagnosis(tmp_path):
    out = tmp_path / "p"
    proc = run_cli("parity", "--as-is", "--urdf", _erd(PANDA), "--out", out, "--quiet",
                   "--samples", "4")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the engines disagree as-is
    rows = json.loads((out / "records.json").read_text())
    stages = {r["stage"] for r in rows}
    assert {"model_identity", "diagnosis"} <= stages
    damp = [r for r in rows if r["quantity"] == "joint_damping"]
    assert_known(damp)  # fails exactly across the known disagreement's engines
    assert {r["engine_b"] for r in damp if r["engine_a"] == "declared"
            and r["status"] == "failed"} == PIN_SIDE
    assert "joint_damping     declared~pinocchio: panda_joint1" in proc.stdout
    assert run_cli("verify", out).returncode == 0


def test_clean_model_diagnosis_exits_0_and_says_the_engines_agree(tmp_path):
    from fixtures.export import to_urdf
    from tests.unit.test_diagnose import arm

    path = tmp_path / "arm.urdf"
    path.write_text(to_urdf(arm()))
    proc = run_cli("diagnose", path, "--out", tmp_path / "d", "--quiet", "--samples", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "the engines agree on M, h, v̇ and τ" in proc.stdout
    assert "causes" not in proc.stdout


@pytest.mark.parametrize("args,needle", [
    (["diagnose", "/nonexistent/robot.urdf"], "/nonexistent/robot.urdf"),
    (["diagnose", "FILE", "--engine-file", "mujoco"], "ENGINE=PATH"),
    (["diagnose", "FILE", "--engine-file", "bullet=x.xml"], "unknown engine"),
    (["diagnose", "FILE", "--beyond-limits", "-1"], "--beyond-limits"),
    (["parity", "--urdf", "FILE", "--engine-file", "mujoco=x.xml"], "need --as-is"),
    (["parity", "--as-is", "--fixture", "pendulum"], "--as-is"),
])
def test_bad_input_exit_2_one_line(tmp_path, args, needle):
    args = [str(_erd(PANDA)) if a == "FILE" else a for a in args]
    out = tmp_path / "out"
    proc = run_cli(*args, "--out", out)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert needle in _one_line_error(proc)
    assert not out.exists()
