"""Every ``harness …`` command a report suggests runs: it exits 0 or 1 (a verdict), never
2 (bad input, such as a catalog fixture's ``fixture:NAME`` passed where a file is
expected). The reports: the committed qualify bundle re-rendered (catalog fixtures with
notes), a parity run of a catalog fixture with notes and a parity run of a file with notes
(whose report suggests ``harness diagnose FILE``). A bare command name in running text
(``harness verify`` explaining what verify does) names a command, it suggests no run."""
from __future__ import annotations

import html
import re
import shlex

from tests.conftest import ROOT, run_cli

GOLDEN = ROOT / "fixtures" / "golden"


def _suggested(page) -> list[list[str]]:
    codes = re.findall(r"<code>harness ([^<]+)</code>", page.read_text())
    return [shlex.split(html.unescape(c)) for c in codes if len(c.split()) > 1]


def _run_all(commands, tmp_path) -> None:
    for i, args in enumerate(commands):
        out = tmp_path / f"suggested{i}"
        proc = run_cli(*args, "--out", out, "--quiet", "--samples", "3")
        assert proc.returncode in (0, 1), (args, proc.stderr)


def test_the_qualify_report_suggests_only_commands_that_run(tmp_path):
    page = tmp_path / "qualify.html"
    assert run_cli("report", ROOT / "evidence" / "qualify-ci", "--out", page,
                   "--quiet").returncode == 0
    text = page.read_text()
    assert "fixture:humanoid_ball" in text and "is a catalog fixture" not in text
    assert "are catalog fixtures" in text
    _run_all(_suggested(page), tmp_path)


def test_parity_reports_of_a_fixture_and_a_file_suggest_commands_that_run(tmp_path):
    fix = tmp_path / "fixture"
    assert run_cli("parity", "--fixture", "hand", "--samples", "3", "--out", fix,
                   "--quiet").returncode in (0, 1)
    assert "is a catalog fixture" in (fix / "index.html").read_text()
    _run_all(_suggested(fix / "index.html"), tmp_path)
    fil = tmp_path / "file"
    assert run_cli("parity", "--mjcf", GOLDEN / "hand.xml", "--samples", "3", "--out", fil,
                   "--quiet").returncode in (0, 1)
    commands = _suggested(fil / "index.html")
    assert [c[0] for c in commands] == ["diagnose"], commands
    _run_all(commands, tmp_path)
