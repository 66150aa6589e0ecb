"""The fit and sweep pages say under their title which harness version and git commit
made the run, as the parity report does: the commit named is the one the run recorded
(fit.json's provenance, sweep.json's git_commit), which is the checkout's HEAD."""
from __future__ import annotations

import json
import re
import subprocess

from harness import api, cli
from harness.core.version import __version__
from tests.conftest import ROOT, run_cli


def _head() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def _line_under_title(html: str) -> str:
    m = re.search(r"</h1>\s*<p class=\"small\"[^>]*>(.*?)</p>", html, re.S)
    assert m, "no line under the title"
    return m.group(1)


def test_fit_report_names_version_and_commit_under_its_title(tmp_path):
    out = tmp_path / "fit"
    assert run_cli("fit", "--problem", "pendulum", "--n", "1000", "--p0", "60",
                   "--out", out).returncode == 0
    commit = json.loads((out / "fit.json").read_text())["provenance"]["git_commit"]
    assert commit == _head()
    line = _line_under_title((out / "index.html").read_text())
    assert f"harness {__version__} · commit <code>{commit[:12]}</code>" in line, line


def test_sweep_report_names_version_and_commit_under_its_title(tmp_path, monkeypatch):
    monkeypatch.setitem(api.SWEEPS, "pendulum_test", "tests.support.sweep_cases")
    out = tmp_path / "sweep"
    assert cli.main(["sweep", "pendulum_test", "--out", str(out), "--quick", "--quiet",
                     "--workers", "1"]) == 0
    commit = json.loads((out / "sweep.json").read_text())["git_commit"]
    assert commit == _head()
    line = _line_under_title((out / "index.html").read_text())
    assert f"harness {__version__} · commit <code>{commit[:12]}</code>" in line, line
