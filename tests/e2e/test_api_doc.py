"""docs/api.md runs as written: a user checks their own URDF from Python, diagnoses it,
writes a candidate from their own fitter, and replays it — from the API and with the
`harness replay` command. The example's own asserts and the checks below can fail: a
candidate file that `replay` refuses, a verdict that contradicts the exit code, a bundle
that does not verify."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

from tests.conftest import ROOT, run_cli


def _blocks() -> list:
    doc = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", doc, re.S)


def test_api_doc_example_runs_and_its_candidate_replays(tmp_path):
    blocks = _blocks()
    assert len(blocks) >= 4, "docs/api.md lost its examples"
    shutil.copy(ROOT / "fixtures" / "golden" / "double_pendulum.urdf",
                tmp_path / "my_robot.urdf")
    script = tmp_path / "example.py"
    script.write_text("\n".join(blocks), encoding="utf-8")
    p = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                       text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "replay verdict: qualified" in p.stdout, p.stdout
    # the candidate the user's own code wrote is accepted by the command line as well
    manifest = json.loads((tmp_path / "my_candidate.json").read_text())
    assert manifest["provenance"]["producer"] == "my fitter"
    r = run_cli("replay", str(tmp_path / "my_candidate.json"), "--out",
                str(tmp_path / "cli_replay"), "--samples", "2", "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    v = run_cli("verify", str(tmp_path / "cli_replay"), cwd=tmp_path)
    assert v.returncode == 0, v.stdout


def test_python_m_harness_version():
    p = subprocess.run([sys.executable, "-m", "harness", "--version"], capture_output=True,
                       text=True, timeout=120, cwd=ROOT)
    from harness import __version__

    assert p.returncode == 0 and p.stdout.strip() == f"harness {__version__}", p


def test_api_report_is_callable_after_another_api_call(tmp_path):
    """The harness.report subpackage, imported by the first API call, does not shadow the
    report function: parity, then report, in a fresh interpreter."""
    code = ("import harness\n"
            "o = harness.parity(['pendulum'], out='b', stages=['0'], samples=1,"
            " engines=['pinocchio', 'mujoco'])\n"
            "import harness.report.render\n"
            "path, diff = harness.report('b')\n"
            "print('rendered', path.name, diff)\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr[-3000:]
    assert "rendered index.html None" in p.stdout, p.stdout
