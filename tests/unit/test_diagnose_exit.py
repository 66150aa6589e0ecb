"""Exit codes agree with their bundles, on real engines: `harness parity --as-is` exits 1
whenever a row failed or went unscored; `harness diagnose` exits 0 only when every row of
its bundle that failed, raised or went unscored has a named cause. Bodies an engine's
importer fuses (a welded massless root, a frame link, a fixed hand) read back as the
rigid groups they belong to, so they neither fail stage 0 nor hide stages 1-2; one element
is named everywhere; `diagnose --repair-inertia` says which engine refuses, warns about
or silently accepts a file's non-physical inertia."""
from __future__ import annotations

import json
import re

import numpy as np

from harness import api
from harness.core import figures
from harness.core.records import measure
from harness.core.tolerances import lookup
from harness.model.prepared import prepare_fixture
from harness.stages import runner
from harness.stages.diagnosis import summary as diag_summary
from tests.conftest import ROOT, EditedMjcfModel, assert_close, run_cli

GOLDEN_DP = ROOT / "fixtures" / "golden" / "double_pendulum.urdf"
BAD = ("failed", "error", "not_scored", "unconverged")


def _erd(rel):
    import example_robot_data

    return example_robot_data.getModelPath(rel) + "/" + rel


PANDA = "panda_description/urdf/panda.urdf"


def test_golden_double_pendulum_as_is_has_no_failed_row_and_both_commands_exit_0(tmp_path):
    """MuJoCo's importer fuses the massless tip into `lower` and the welded massless base
    into the world: its read-back must equal the file's (it was NaN: 4 failed rows and 18
    unscored ones behind them, while diagnose exited 0)."""
    o = api.parity(urdf=str(GOLDEN_DP), as_is=True, out=tmp_path / "p", samples=3)
    assert [r.id for r in o.records if r.status in BAD] == []
    assert o.exit_code == 0
    rows = o.arrays["out/double_pendulum/body_inertia/mujoco"]
    labels = [str(x) for x in o.arrays["labels/double_pendulum/body_inertia"]]
    assert labels == ["upper", "lower"]  # rigid groups; the welded base moves with nothing
    assert_close(rows, o.arrays["out/double_pendulum/body_inertia/declared"],
                 "model_identity", "body_inertia", "mujoco's groups against the file's")
    # stage 1 is scored for MuJoCo, the frames of fused bodies included
    poses = [r for r in o.records if r.quantity == "frame_pose" and "mujoco" in r.id]
    assert poses and all(r.status == "passed" for r in poses)
    assert {"base", "tip"} <= {str(x).split(" / ")[1]
                               for x in o.arrays["labels/double_pendulum/frame_pose"]}
    d = api.diagnose(str(GOLDEN_DP), out=tmp_path / "d", samples=3)
    assert d.exit_code == 0 and d.explained
    assert [r.id for r in d.records if r.status in BAD] == []


def test_panda_diagnose_explains_every_row_while_parity_as_is_exits_1(tmp_path):
    o = api.diagnose(_erd(PANDA), out=tmp_path / "d", samples=4)
    (s,) = api.diagnosis_summaries(o)
    failed = {r.id for r in o.records if r.status == "failed" and r.stage != "diagnosis"}
    unscored = {r.id for r in o.records if r.status == "not_scored"}
    assert failed and unscored  # real differences: the bundle's verdict is not qualified
    assert o.verdict.exit_code == 1
    rows = {x["id"]: x for x in s["rows"]}
    assert failed | unscored <= set(rows)
    assert all(x["causes"] for x in rows.values()), [x for x in rows.values()
                                                     if not x["causes"]]
    assert {rows[i]["causes"][0] for i in failed if "/joint_damping/" in i} == \
        {"joint damping"}
    assert rows["panda/dynamics/forward_dynamics/mujoco~drake"]["causes"] == \
        ["coupled (mimic) joints"]
    # body rows: MuJoCo fused panda_hand into panda_link7 exactly; the group row agrees
    assert not any("/body_inertia/" in i for i in failed)
    assert "panda_link7 (with panda_hand)" in [
        str(x) for x in o.arrays["labels/panda/body_inertia"]]
    assert o.exit_code == 0
    # the report says what the exit code says: explained, and not qualified as parity
    html = (tmp_path / "d" / "index.html").read_text()
    banner = re.search(r'id="diagnosis-verdict">([^<]*)<', html).group(1)
    assert banner == "every difference is explained by a named cause"
    assert re.search(r'id="parity-verdict">([^<]*)<', html).group(1) == \
        "parity: not qualified"
    # the page's banner carries diagnose's exit code and its words
    top = re.search(r'<div id="verdict" class="verdict-(\w+)" data-exit-code="(\d)"', html)
    assert top.groups() == ("passed", str(o.exit_code))
    # the same file through `parity --as-is`: the parity verdict, exit 1
    p = run_cli("parity", "--as-is", "--urdf", _erd(PANDA), "--out", tmp_path / "p",
                "--samples", "2", "--quiet")
    assert p.returncode == 1, p.stdout + p.stderr


def test_diagnose_exits_1_on_a_difference_outside_the_catalogue(tmp_path):
    """MuJoCo is given its own file in which `lower` weighs 0.9 kg instead of 0.8: named
    ('other'), not explained, exit 1 — and printed row by row."""
    xml = (ROOT / "fixtures" / "golden" / "double_pendulum.xml").read_text()
    assert xml.count('mass="0.8"') == 1
    heavy = tmp_path / "heavy.xml"
    heavy.write_text(xml.replace('mass="0.8"', 'mass="0.9"'))
    o = api.diagnose(str(GOLDEN_DP), out=tmp_path / "d", samples=3,
                     engine_files={"mujoco": str(heavy)})
    (s,) = api.diagnosis_summaries(o)
    assert o.exit_code == 1 and not o.explained
    left = {x["id"]: x["why"] for x in s["rows_unexplained"]}
    assert "double_pendulum/model_identity/body_inertia/declared~mujoco" in left
    assert any("NOT EXPLAINED" in line for line in s["lines"])


def test_a_missing_body_is_named_once_first_differing_and_worst(tmp_path):
    """MuJoCo's MJCF renames link3: its group row is missing (NaN). The record's worst
    label and the first differing element are the same body (the NaN row was ranked last,
    so the two named different elements)."""
    bad = EditedMjcfModel(prepare_fixture("chain7").spec, "chain7 (link3 renamed)",
                      edit=('<body name="link3"', '<body name="link3_renamed"'))
    res = runner.run([bad], ["mujoco", "pinocchio"], stages=["0"], samples=1)
    (r,) = [r for r in res.records if r.id.endswith("/body_inertia/declared~mujoco")]
    assert r.status == "failed" and r.reason
    firsts = {x.id: label for x, label in diag_summary.first_differing(res.records,
                                                                         res.arrays)}
    assert firsts[r.id] == r.worst_label == "link3"
    # and directly: a NaN sample is the worst sample
    a = np.array([[1.0], [2.0], [np.nan], [4.0]])
    b = np.array([[1.0], [2.5], [3.0], [4.0]])
    assert measure(a, b, lookup("dynamics", "mass_matrix"))[2] == 2


def _bad_inertia_urdf(tmp_path):
    """The golden double pendulum with `lower`'s inertia violating the triangle
    inequality (0.01 + 0.01 < 0.05 kg·m²)."""
    text = GOLDEN_DP.read_text()
    text, n = re.subn(r'(<link name="lower">.*?<inertia )[^/]*/>',
                      r'\1ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.05"/>',
                      text, count=1, flags=re.S)
    assert n == 1
    path = tmp_path / "bad_inertia.urdf"
    path.write_text(text)
    return path


def test_diagnose_repair_inertia_says_who_refuses_warns_or_accepts(tmp_path):
    path = _bad_inertia_urdf(tmp_path)
    p = run_cli("diagnose", path, "--repair-inertia", "--samples", "3", "--out",
                tmp_path / "a", "--quiet")
    assert "unrecognized arguments" not in p.stderr
    assert p.returncode == 1, p.stdout + p.stderr  # MuJoCo cannot load the file
    out = " ".join(p.stdout.split())
    assert "non-physical inertia in the file" in out and "link lower" in out
    assert "mujoco refuses the file" in out and "A + B >= C" in out
    assert "drake warns and holds values of its own" in out
    assert "pinocchio accepts it silently and holds the file's values" in out
    assert "crocoddyl accepts it silently and holds the file's values" in out
    # without the engine that refuses: the repaired inertia explains every difference
    q = run_cli("diagnose", path, "--repair-inertia", "--samples", "3", "--engines",
                "pinocchio,crocoddyl,drake", "--out", tmp_path / "b", "--quiet")
    assert q.returncode == 0, q.stdout + q.stderr
    assert "every difference is explained" in q.stdout
    assert "non-physical inertia in the file [explains]" in q.stdout
    assert run_cli("verify", tmp_path / "b").returncode == 0


def test_a_diagnose_bundle_from_the_python_api_rerenders_with_the_diagnosis_rule(tmp_path):
    """``api.diagnose`` records no ``harness diagnose`` command line; ``harness report`` of
    its bundle still gives the diagnosis banner and title (the parity banner before), and
    leaves the chart library beside the page alone when it is the installed copy."""
    out = tmp_path / "d"
    d = api.diagnose(str(GOLDEN_DP), out=out, samples=2, engines="mujoco,pinocchio")
    assert d.exit_code == 0 and d.explained
    assert json.loads((out / "manifest.json").read_text())["command_line"][1:2] != \
        ["diagnose"]
    first = (out / "index.html").read_text()
    lib = out / "plotly.min.js"
    before = lib.stat()
    p = run_cli("report", out, "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    again = (out / "index.html").read_text()
    for html in (first, again):
        top = re.search(r'<div id="verdict" class="verdict-(\w+)" data-exit-code="(\d)"',
                        html)
        assert top.groups() == ("passed", "0")
        words = re.search(r'<p class="verdict-words">([^<]*)<', html).group(1)
        assert words.startswith("diagnosis: every difference is explained"), words
        assert f"<h1>Why the engines disagree: {GOLDEN_DP}</h1>" in html
    assert (lib.stat().st_ino, lib.stat().st_mtime_ns) == (before.st_ino,
                                                           before.st_mtime_ns)
    lib.write_bytes(b"not the chart library")
    assert run_cli("report", out, "--quiet").returncode == 0
    assert lib.read_bytes() == figures.plotly_js()
