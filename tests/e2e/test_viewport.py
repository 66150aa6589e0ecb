"""Every HTML page the harness writes declares a viewport, so a phone shows it at its own
width instead of a zoomed-out desktop page: the parity, diagnose and replay reports, the
fit page, the sweep page, the swing page and the survey page, each from a real small run."""
from __future__ import annotations

import shutil

from harness import api, cli
from tests.conftest import ROOT, run_cli

VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">'
GOLDEN = ROOT / "fixtures" / "golden"


def _has_viewport(page) -> None:
    html = page.read_text()
    head = html[:html.index("</head>")]
    assert VIEWPORT in head, page


def test_parity_diagnose_replay_and_fit_pages_declare_a_viewport(tmp_path):
    par = tmp_path / "parity"
    assert run_cli("parity", "--fixture", "pendulum", "--samples", "3", "--out", par,
                   "--quiet").returncode in (0, 1)
    _has_viewport(par / "index.html")
    diag = tmp_path / "diag"
    assert run_cli("diagnose", GOLDEN / "pendulum.urdf", "--out", diag,
                   "--quiet").returncode in (0, 1)
    _has_viewport(diag / "index.html")
    cand, rep = tmp_path / "cand.json", tmp_path / "replay"
    assert run_cli("synth", "chain7", "--out", cand, "--duration", "0.2").returncode == 0
    assert run_cli("replay", cand, "--out", rep, "--quiet").returncode in (0, 1)
    _has_viewport(rep / "index.html")
    fit = tmp_path / "fit"
    assert run_cli("fit", "--problem", "pendulum", "--n", "1000", "--p0", "60",
                   "--out", fit).returncode == 0
    _has_viewport(fit / "index.html")


def test_sweep_and_survey_pages_declare_a_viewport(tmp_path, monkeypatch):
    monkeypatch.setitem(api.SWEEPS, "pendulum_test", "tests.support.sweep_cases")
    sweep = tmp_path / "sweep"
    assert cli.main(["sweep", "pendulum_test", "--out", str(sweep), "--quick", "--quiet",
                     "--workers", "1"]) == 0
    _has_viewport(sweep / "index.html")
    src = tmp_path / "models"
    src.mkdir()
    shutil.copy(GOLDEN / "pendulum.urdf", src / "pendulum.urdf")
    survey = tmp_path / "survey"
    assert run_cli("parity", "--batch", src, "--workers", "1", "--samples", "3",
                   "--out", survey, "--quiet").returncode in (0, 1)
    _has_viewport(survey / "index.html")


def test_swing_page_declares_a_viewport(quick_swing):
    _base, out, proc = quick_swing
    assert proc.returncode in (0, 1), proc.stderr
    _has_viewport(out / "index.html")
