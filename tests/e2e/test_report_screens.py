"""One screen answers: every kind of report, produced here by a small real run of its
command, opened in Chromium at a desktop (1400×900) and a phone (390×844) viewport.

* the page opens, right under its title and run line (version, commit, command), with the
  banner ``#verdict`` whose ``data-exit-code`` is the exit code the command returned, whose
  colours and words are the pass ones only for exit 0, and which states the worst
  disagreement or check and the scope it was scored over;
* nothing but a table's scroll container (and what it holds) is wider than the viewport;
* no two tick labels of one chart axis overlap;
* no two legend entries of one chart share a style (colour, symbol and dash);
* no chart title runs past its chart's right edge;
* no console error (open_report).

Kinds: parity, qualify, diagnose (explained: exit 0; a mass edited in MuJoCo's file: not
explained, exit 1), replay, fit, sweep, survey, swing (the session's quick swing) and track
(a 0.1 s slice of OpenSim's gait2392 walking trial with its force plates).
"""
from __future__ import annotations

import re
import shutil

import pytest

from tests.conftest import ROOT, run_cli
from tests.e2e.browser import open_report
from tests.e2e.screens import MEASURE

GOLDEN = ROOT / "fixtures" / "golden"
WALK = ROOT / "data" / "opensim_models" / "gait2392_walk1"
WIDTHS = {1400: 900, 390: 844}
KINDS = ("parity", "qualify", "diagnose", "diagnose-unexplained", "replay", "fit", "sweep",
         "survey", "swing", "track")
FAIL_WORDS = re.compile(r"^(not qualified|checks not met)\b")


def _make(tmp, kind: str, quick_swing) -> tuple[int, object]:
    """(exit code, index.html) of one small real run of ``kind``."""
    out = tmp / kind
    if kind == "parity":
        p = run_cli("parity", "--fixture", "pendulum", "--samples", "3", "--out", out, "--quiet")
    elif kind == "qualify":
        p = run_cli("qualify", "--samples", "2", "--out", out, "--quiet")
    elif kind == "diagnose":
        p = run_cli("diagnose", GOLDEN / "pendulum.urdf", "--samples", "3", "--out", out,
                    "--quiet")
    elif kind == "diagnose-unexplained":  # MuJoCo reads a lower link of 0.9 kg, not 0.8
        xml = (GOLDEN / "double_pendulum.xml").read_text()
        assert xml.count('mass="0.8"') == 1
        heavy = tmp / "heavy.xml"
        heavy.write_text(xml.replace('mass="0.8"', 'mass="0.9"'))
        p = run_cli("diagnose", GOLDEN / "double_pendulum.urdf", "--engine-file",
                    f"mujoco={heavy}", "--samples", "3", "--out", out, "--quiet")
    elif kind == "replay":
        cand = tmp / "cand.json"
        assert run_cli("synth", "chain7", "--out", cand, "--duration", "0.2").returncode == 0
        p = run_cli("replay", cand, "--out", out, "--quiet")
    elif kind == "fit":
        p = run_cli("fit", "--problem", "pendulum", "--n", "1000", "--p0", "60", "--out", out)
    elif kind == "sweep":
        p = run_cli("sweep", "contact", "--quick", "--workers", "1", "--out", out, "--quiet")
    elif kind == "survey":
        src = tmp / "models"
        src.mkdir()
        shutil.copy(GOLDEN / "pendulum.urdf", src / "pendulum.urdf")
        p = run_cli("parity", "--batch", src, "--workers", "1", "--samples", "3", "--out", out,
                    "--quiet")
    elif kind == "track":
        p = run_cli("track", WALK / "subject01_simbody.osim", WALK / "subject01_walk1.trc",
                    "--loads", WALK / "subject01_walk1_grf.xml", "--start", "0.5", "--end",
                    "0.6", "--out", out, "--quiet")
    else:
        _base, out, p = quick_swing
    assert p.returncode in (0, 1), (kind, p.stdout[-2000:], p.stderr[-2000:])
    return p.returncode, out / "index.html"


@pytest.fixture(scope="module")
def pages(tmp_path_factory, quick_swing):
    """{kind: (exit code, index.html)} of every kind, each from its own real run."""
    tmp = tmp_path_factory.mktemp("screens")
    return {k: _make(tmp, k, quick_swing) for k in KINDS}


_measured: dict = {}


@pytest.fixture
def measure(pages):
    """measure(kind, width) → (exit code, what MEASURE found on the open page); one browser
    visit per (kind, width), shared by the checks below."""
    def get(kind: str, width: int):
        if (kind, width) not in _measured:
            rc, html = pages[kind]
            _measured[kind, width] = rc, open_report(
                html, lambda page: page.evaluate(MEASURE), f"screens-{kind}-{width}.png",
                width=width, height=WIDTHS[width])
        return _measured[kind, width]
    return get


CASES = [(k, w) for k in KINDS for w in WIDTHS]


@pytest.mark.parametrize("kind,width", CASES)
def test_banner_follows_the_exit_code(measure, kind, width):
    rc, m = measure(kind, width)
    b = m["banner"]
    assert b is not None, f"{kind}: no #verdict banner"
    assert b["count"] == 1 and b["underTitle"], f"{kind}: the banner is not under the title"
    assert b["exit"] == str(rc), f"{kind}: data-exit-code {b['exit']}, the command exited {rc}"
    assert ("verdict-passed" in b["cls"]) == (rc == 0), (kind, rc, b["cls"])
    green = b["bg"] == "rgb(227, 245, 225)"
    assert green == (rc == 0), f"{kind}: background {b['bg']} with exit code {rc}"
    assert bool(FAIL_WORDS.match(b["words"])) == (rc == 1), (kind, rc, b["words"])
    assert b["worst"].strip() and b["scope"].startswith("Scored over: ") and len(b["scope"]) > 20
    assert b["command"].startswith("harness "), b["command"]
    if kind == "swing":  # the replay's claim names the window its records are scored over
        # (one time when every engine's ends alike, else each engine's)
        assert re.search(r"records scored up to t = (?:\w+ )?\d", b["scope"]), b["scope"]
    if kind in ("parity", "qualify", "replay", "diagnose", "diagnose-unexplained"):
        assert re.search(r" vs |alone", b["worst"]), b["worst"]  # the engines involved


@pytest.mark.parametrize("kind,width", CASES)
def test_nothing_but_charts_wider_than_the_screen(measure, kind, width):
    """Tables scroll inside themselves (or their container); the head, the banner and
    the text wrap. Charts are checked apart (below)."""
    _rc, m = measure(kind, width)
    assert m["nWide"] == 0, f"{kind} at {width} px: {m['nWide']} wider: {m['wide']}"
    assert m["scrollWidth"] <= m["width"] or m["nWideCharts"], (kind, width, m["scrollWidth"])


@pytest.mark.parametrize("kind,width", CASES)
def test_charts_fit_the_screen(measure, kind, width):
    _rc, m = measure(kind, width)
    assert m["nWideCharts"] == 0, f"{kind} at {width} px: {m['wideCharts']}"
    assert m["scrollWidth"] <= m["width"], (kind, width, m["scrollWidth"])


@pytest.mark.parametrize("kind,width", CASES)
def test_tick_labels_do_not_overlap(measure, kind, width):
    _rc, m = measure(kind, width)
    assert m["nOverlaps"] == 0, f"{kind} at {width} px: {m['overlaps']}"


@pytest.mark.parametrize("kind,width", CASES)
def test_legend_entries_differ_in_style(measure, kind, width):
    _rc, m = measure(kind, width)
    assert m["nDuplicates"] == 0, f"{kind} at {width} px: {m['duplicates']}"


@pytest.mark.parametrize("kind,width", CASES)
def test_chart_titles_fit_their_charts(measure, kind, width):
    """A chart's title longer than the chart is wide is broken into lines (the page's
    script), not cut off at the chart's right edge."""
    _rc, m = measure(kind, width)
    assert m["nCutTitles"] == 0, f"{kind} at {width} px: {m['cutTitles']}"
