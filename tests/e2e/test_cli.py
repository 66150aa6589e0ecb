"""The CLI as a user runs it (subprocesses of the installed package, real engines)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness.core import figures, io
from harness.core.tolerances import lookup
from tests.conftest import reseal_arrays, run_cli
from tests.e2e.test_report_plots import chart_titles


def _one_line_error(proc):
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("harness: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def parity_all(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "all"
    proc = run_cli("parity", "--fixture", "all", "--samples", "8", "--out", out, "--quiet")
    return proc, out


def test_parity_all_fixtures_passes_with_every_engine(parity_all):
    proc, out = parity_all
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"report: {out.resolve() / 'index.html'}" in proc.stdout
    rows = json.loads((out / "records.json").read_text())
    for key in ("stage", "fixture", "quantity", "engine_a", "engine_b", "max_abs", "max_rel",
                "atol", "rtol", "passed"):
        assert all(key in r for r in rows)
    scored = [r for r in rows if r["status"] in ("passed", "failed")]
    assert scored and all(r["passed"] for r in scored)
    assert max(r["max_rel"] for r in scored) <= lookup("tests", "parity_claim").rtol
    m = json.loads((out / "manifest.json").read_text())
    assert set(m["engines"]) == {"mujoco", "pinocchio", "crocoddyl", "drake", "opensim"}
    assert {f["name"] for f in m["fixtures"]} == {"pendulum", "double_pendulum", "chain7",
                                                  "free_body", "tree_floating",
                                                  "ball", "box", "rod",  # contact
                                                  "planar_golfer", "golfer3d",  # swing
                                                  "spring_chain",  # joint springs
                                                  "humanoid_ball", "humanoid_ball_fixed",
                                                  "hand"}  # ball joints, joint chains
    html = (out / "index.html").read_text()
    assert 'id="ladder"' in html and chart_titles(html)  # interactive charts
    # nothing is fetched: the one script file is the bundle's own plotly.min.js beside it
    import re
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", html)
    assert re.findall(r"<script src=\"([^\"]+)\"", html) == ["plotly.min.js"]
    assert (out / "plotly.min.js").read_bytes() == figures.plotly_js()
    assert "<link" not in html
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", html) and "@import" not in html


def test_verify_passes_then_fails_after_one_number_changes(parity_all, tmp_path):
    _, out = parity_all
    ok = run_cli("verify", out)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    copy = tmp_path / "copy"
    import shutil
    shutil.copytree(out, copy)
    with np.load(copy / "arrays.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    key = "out/chain7/mass_matrix/drake"
    arrays[key][2, 3, 4] *= 1.0 + 1e-6
    (copy / "arrays.npz").write_bytes(io.npz_bytes(arrays))
    bad = run_cli("verify", copy)  # the archive differs from its hash: never decompressed
    assert bad.returncode == 1 and "MISMATCH arrays.npz: file sha256 differs" in bad.stdout
    reseal_arrays(copy, arrays)  # the file's hash updated too
    bad = run_cli("verify", copy)
    assert bad.returncode == 1
    assert "chain7/dynamics/mass_matrix/" in bad.stdout and key in bad.stdout


def test_report_regenerates_from_bundle(parity_all, tmp_path):
    _, out = parity_all
    target = tmp_path / "r.html"
    proc = run_cli("report", out, "--out", target)
    assert proc.returncode == 0, proc.stderr
    assert 'id="ladder"' in target.read_text()


def test_engines_lists_versions():
    proc = run_cli("engines")
    assert proc.returncode == 0
    for name, ver in [("mujoco", "4.0.0"), ("pinocchio", "4.0.0"), ("crocoddyl", "3.2.1"),
                      ("drake", "1.51.1")]:
        assert any(l.split()[:3] == [name, ver, "available"] for l in proc.stdout.splitlines())


BAD = [
    (["parity", "--urdf", "/nonexistent/robot.urdf"], "/nonexistent/robot.urdf"),
    (["parity", "--fixture", "nope"], "unknown fixture"),
    (["parity", "--fixture", "pendulum", "--engines", "mujoco,bullet"], "unknown engine"),
    (["parity", "--fixture", "pendulum", "--engines", "mujoco"], "at least two"),
    (["parity", "--fixture", "pendulum", "--stages", "7"], "unknown stage"),
    (["parity", "--fixture", "pendulum", "--samples", "0"], "--samples"),
    (["parity", "--fixture", "pendulum", "--bogus"], "unrecognized arguments"),
    (["verify", "/nonexistent/bundle"], "not a bundle"),
]


@pytest.mark.parametrize("args,needle", BAD, ids=[" ".join(a[:3]) for a, _ in BAD])
def test_bad_input_exit_2_one_line_no_output(tmp_path, args, needle):
    out = tmp_path / "out"
    extra = ["--out", str(out)] if args[0] == "parity" else []
    proc = run_cli(*args, *extra)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert needle in _one_line_error(proc)
    assert not out.exists(), "a folder was written for bad input"
    assert list(tmp_path.iterdir()) == []


def test_malformed_urdf_exit_2(tmp_path):
    bad = tmp_path / "broken.urdf"
    bad.write_text('<robot name="r"><link name="a"><inertial><mass value="1"/>')
    out = tmp_path / "out"
    proc = run_cli("parity", "--urdf", bad, "--out", out)
    assert proc.returncode == 2
    assert str(bad) in _one_line_error(proc)
    assert not out.exists()


def test_refuses_to_replace_a_folder_that_is_not_a_bundle(tmp_path):
    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    proc = run_cli("parity", "--fixture", "pendulum", "--out", out)
    assert proc.returncode == 2 and "not an evidence bundle" in _one_line_error(proc)
    assert (out / "notes.txt").read_text() == "mine"


def test_qualify_writes_bundle_and_report(tmp_path):
    out = tmp_path / "q"
    proc = run_cli("qualify", "--out", out, "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (out / "index.html").is_file()
    assert run_cli("verify", out).returncode == 0


ERD = None


def _erd(rel):
    """Path of a URDF shipped in the example-robot-data package."""
    import example_robot_data
    root = Path(example_robot_data.__file__).resolve()
    for parent in root.parents:
        cand = parent / "share" / "example-robot-data" / "robots" / rel
        if cand.exists():
            return cand
    raise AssertionError(f"example-robot-data file {rel} not found")


@pytest.mark.parametrize("rel,floating", [
    ("panda_description/urdf/panda.urdf", False),
    ("panda_description/urdf/panda.urdf", True),
    ("solo_description/robots/solo12.urdf", True),
])
def test_user_urdf_from_example_robot_data_passes_stages_0_to_2(tmp_path, rel, floating):
    """As a new user would: the file as shipped, nothing edited."""
    out = tmp_path / "u"
    args = ["parity", "--urdf", _erd(rel), "--out", out, "--quiet", "--samples", "5"]
    proc = run_cli(*args, *(["--floating"] if floating else []))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = json.loads((out / "records.json").read_text())
    scored = [r for r in rows if r["status"] in ("passed", "failed")]
    # panda's mimic finger is a joint coupling: stage 3 compares it
    stages = {"model_identity", "kinematics", "dynamics"} | \
        ({"constrained"} if "panda" in rel else set())
    assert {r["stage"] for r in scored} == stages
    assert all(r["passed"] for r in scored)
    assert max(r["max_rel"] for r in scored if r["max_rel"] is not None) <= \
        lookup("tests", "parity_claim").rtol
    engines = {r["engine_a"] for r in scored} | {r["engine_b"] for r in scored}
    assert {"mujoco", "pinocchio", "crocoddyl", "drake"} <= engines


def test_non_physical_inertia_is_refused_then_repaired_on_request(tmp_path):
    go1 = _erd("go1_description/urdf/go1.urdf")
    proc = run_cli("parity", "--urdf", go1, "--out", tmp_path / "a", "--quiet")
    assert proc.returncode == 2
    line = _one_line_error(proc)
    assert str(go1) in line and "--repair-inertia" in line
    proc = run_cli("parity", "--urdf", go1, "--floating", "--repair-inertia", "--samples", "3",
                   "--out", tmp_path / "b", "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_qualify_junit_has_one_case_per_record_and_fails_what_did_not_pass(tmp_path):
    import xml.etree.ElementTree as ET

    out, junit = tmp_path / "q", tmp_path / "j.xml"
    proc = run_cli("qualify", "--out", out, "--quiet", "--coarse-replay", "--junit", junit)
    assert proc.returncode == 1  # the coarse replay is unconverged
    rows = json.loads((out / "records.json").read_text())
    root = ET.parse(junit).getroot()
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert set(cases) == {r["id"] for r in rows}
    for r in rows:
        kids = [k.tag for k in cases[r["id"]]]
        if r["status"] == "passed":
            assert kids == []
        elif r["status"] in ("not_provided", "informational"):  # no verdict
            assert kids == ["skipped"]
        else:
            assert kids in (["failure"], ["error"]), (r["id"], r["status"])
    assert any(r["status"] == "unconverged" for r in rows)
    assert int(root.get("failures")) == sum(r["status"] in ("failed", "not_scored",
                                                             "unconverged") for r in rows)
