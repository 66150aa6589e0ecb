"""`harness track` on OpenSim's other pipelines (data/opensim_models/rajagopal): a .trc
whose header pads its fields with empty ones, the dependent coordinate of a
CoordinateCouplerConstraint given to OpenSim's ID tool and its generalized force carried
onto the independent one, and the IK setup's time window.

Figures of the whole trials: bench/track_pipelines.py."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np

from harness.capture.motion_files import read_table, read_trc, table_text
from harness.core.tolerances import lookup
from harness.model import registry
from harness.track.run import ik_time_range
from tests.conftest import ROOT, run_cli

RAJ = ROOT / "data" / "opensim_models" / "rajagopal"
WALK = ROOT / "data" / "opensim_models" / "gait2392_walk1"


def test_a_trc_header_padded_with_empty_fields():
    """Rajagopal's walking .trc writes ``100.0<tab><tab>100.0<tab><tab>238…``: the names
    and values pair in order once the empty fields are dropped (units mm, rate 100 Hz)."""
    path = RAJ / "motion_capture_walk_head.trc"
    m = read_trc(str(path))
    lines = path.read_text().splitlines()
    labels = [x.strip() for x in lines[3].split("\t")[2::3] if x.strip()]
    assert m.labels == tuple(labels) and len(labels) == 41
    assert m.rate_hz == float(lines[2].split()[0])
    first = lines[6].split("\t")  # frame 1: Frame#, Time, then x y z of each marker in mm
    assert m.t[0] == float(first[1])
    assert np.array_equal(m.xyz[0, 0], np.array([float(x) for x in first[2:5]]) / 1000)


def _id(tmp, name, cols, t, X):
    """OpenSim's ID tool (no loads) on the coordinates X (F, len(cols)) [rad | m]."""
    folder = tmp / name
    folder.mkdir()
    f = folder / "q.sto"
    f.write_text(table_text("q", t, cols, X, False))
    tools = registry.adapter_class(registry.for_role("motion_tools")[0])
    return tools.motion_id_tool(str(RAJ / "Rajagopal2016.osim"), str(f), None,
                                float(t[0]), float(t[-1]), str(folder))


def test_coupler_dependent_given_to_the_id_tool_and_projected(tmp_path):
    """Rajagopal2016's patella coordinate knee_angle_<side>_beta equals the knee angle
    (an enforced CoordinateCouplerConstraint, slope 1). Given a coordinates file without
    it (ours: the canonical model composes the coupling), OpenSim's ID tool must see it
    move with the knee, exactly as when the file holds it, and its generalized force
    must be added to the knee's (the tool ignores constraints)."""
    t = np.linspace(0.0, 0.2, 9)
    cols = ["pelvis_ty", "knee_angle_r", "knee_angle_l", "hip_flexion_r"]
    X = np.stack([0.95 + 0 * t, 0.8 + 0.6 * np.sin(6 * t), 0.4 + 0.5 * np.sin(4 * t),
                  0.3 * np.sin(5 * t)], axis=1)
    without = _id(tmp_path, "without", cols, t, X)
    full = cols + ["knee_angle_r_beta", "knee_angle_l_beta"]
    given = _id(tmp_path, "given", full, t, np.column_stack([X, X[:, 1], X[:, 2]]))
    raw = read_table(given["file"])  # the tool's own output, nothing projected
    rtol = lookup("track", "id_vs_tool").rtol
    for side in "rl":
        knee, beta = f"knee_angle_{side}_moment", f"knee_angle_{side}_beta_force"
        share = raw.column(beta, "given")
        assert np.max(np.abs(share)) > 1e3 * rtol * np.max(np.abs(raw.column(knee, "")))
        expect = raw.column(knee, "given") + share
        got = without["tau"][:, without["labels"].index(knee)]
        assert np.max(np.abs(got - expect)) <= rtol * np.max(np.abs(expect)), side
    for k, lab in enumerate(without["labels"]):
        if "knee_angle" not in lab:
            a, b = without["tau"][:, k], raw.column(lab, "given")
            assert np.max(np.abs(a - b)) <= rtol * max(np.max(np.abs(b)), 1.0), lab
    assert "CoordinateCouplerConstraint" in without["settings"]


def test_the_ik_setups_time_range_and_a_bad_one(tmp_path):
    """The window defaults to the IK setup's <time_range>; one that is not two numbers is
    refused in one line naming the setup, exit 2, nothing written."""
    setup = WALK / "subject01_Setup_IK.xml"
    text = ET.parse(setup).getroot().find(".//time_range").text
    assert ik_time_range(str(setup)) == tuple(float(x) for x in text.split())
    bad = tmp_path / "setup.xml"
    bad.write_text(re.sub(r"<time_range>[^<]*</time_range>", "<time_range>0.5 late"
                          "</time_range>", setup.read_text()))
    out = tmp_path / "out"
    p = run_cli("track", WALK / "subject01_simbody.osim", WALK / "subject01_walk1.trc",
                "--ik-setup", bad, "--out", out, "--quiet")
    assert p.returncode == 2 and not out.exists(), p.stdout + p.stderr
    err = [x for x in p.stderr.splitlines() if x.startswith("harness: error:")]
    assert len(err) == 1 and str(bad) in err[0] and "time_range" in err[0], p.stderr


_C3D_AROUND_THE_ID_TOOL = r"""
import sys
from pathlib import Path

import ezc3d
import numpy as np

from tests.e2e.test_track_pipelines import (
    test_coupler_dependent_given_to_the_id_tool_and_projected as id_with_dependents,
)


def write_c3d(path):
    c = ezc3d.c3d()
    c["parameters"]["POINT"]["RATE"]["value"] = [100]
    c["parameters"]["POINT"]["LABELS"]["value"] = ["a"]
    c["data"]["points"] = np.zeros((4, 1, 5))
    c.write(str(path))


tmp = Path(sys.argv[1])
write_c3d(tmp / "before.c3d")
id_with_dependents(tmp)
write_c3d(tmp / "after.c3d")
print("ok")
"""


def test_the_id_tools_dependents_leave_c3d_writes_working(tmp_path):
    """OpenSim and ezc3d register SWIG's std::vector<int> under one name: code that built
    an opensim.StdVectorInt (a coupling's derivative) in a process that also writes C3D
    broke one or the other (a TypeError in OpenSim's calcDerivative, measured in the
    suite). In one interpreter, in this order: a C3D written, OpenSim's ID tool with a
    coupled coordinate's column and its slope, a C3D written again."""
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-c", _C3D_AROUND_THE_ID_TOOL, str(tmp_path)],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0 and p.stdout.strip().endswith("ok"), p.stdout + p.stderr
    assert (tmp_path / "after.c3d").stat().st_size > 0
