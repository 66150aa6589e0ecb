"""The evidence-bundle report's charts in a real browser (headless Chromium, tests/e2e/
browser.py) on a qualify bundle and on a diagnose bundle with a known difference: the
report rules hold (contents, units on axes, no relative error against zero), every chart
drew data, a stage chart lists only the fixtures that have records for its quantity
(recomputed here from records.json), replay q(t) charts name their lines after the joints
and carry a legend, run settings are tables, harness and native refinement rows are told
apart. Full-page screenshots go to test-artifacts/."""
from __future__ import annotations

import html as _html
import json
import re
import shutil
from collections import defaultdict

import pytest

from harness.core import figures
from tests.conftest import run_cli
from tests.e2e.browser import ARTIFACTS, assert_report_rules, open_report

SPEC = re.compile(r'<div class="plot" data-spec="([^"]*)"')


def chart_specs(html: str) -> list:
    """The plotly description of every chart of a page (parsed from its HTML)."""
    return [json.loads(_html.unescape(s)) for s in SPEC.findall(html)]


def chart_titles(html: str) -> list:
    """The title of every chart of a page, as a reader sees it."""
    return [_html.unescape(s["layout"]["title"]["text"]) for s in chart_specs(html)]


# what the browser drew: per chart its title, x categories, traces (name, x, y, on the
# overlay axis of reference lines or not), whether the legend shows and how many entries
DRAWN = """() => Array.from(document.querySelectorAll('div.plot')).map(el => ({
  title: ((el.layout.title && el.layout.title.text) || "").replace(/<br>/g, " "),
  xtitle: (el.layout.xaxis.title && el.layout.xaxis.title.text) || "",
  ytitle: (el.layout.yaxis.title && el.layout.yaxis.title.text) || "",
  categories: el.layout.xaxis.categoryarray || null,
  showlegend: el._fullLayout.showlegend,
  legend_entries: el.querySelectorAll('g.legend g.traces').length,
  traces: el.data.map(t => ({name: t.name || "", x: t.x || [], y: t.y || [],
                             ref: t.xaxis === "x2", type: t.type}))
}))"""


def _has_data(chart) -> bool:
    return any(not t["ref"] and any(v is not None for v in (t["y"] or []))
               for t in chart["traces"]) or any(t["type"] == "heatmap"
                                                for t in chart["traces"])


def _stage_quantity_fixtures(records) -> dict:
    """{(quantity, kind): fixtures with a drawable record} computed from records.json: a
    record with a tolerance and numbers, kind "relative" when it is judged by its relative
    error (rtol > 0, relative error defined), else "absolute" (its |Δ| against its atol)."""
    out = defaultdict(set)
    for r in records:
        if r["stage"] not in ("replay", "diagnosis") and r["max_abs"] is not None \
                and r["rtol"] is not None and r["atol"] is not None:
            kind = "relative" if r["max_rel"] is not None and r["rtol"] > 0 else "absolute"
            out[(r["quantity"], kind)].add(r["fixture"])
    return out


def _kind(chart) -> str:
    """The kind of a drawn stage chart, from its value axis."""
    return "absolute" if chart["ytitle"].startswith("max |Δ|") else "relative"


@pytest.fixture(scope="module")
def qualify(tmp_path_factory):
    out = tmp_path_factory.mktemp("plots") / "q"
    proc = run_cli("qualify", "--out", out, "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the catalog qualifies
    return out


@pytest.fixture(scope="module")
def diagnosed(tmp_path_factory):
    """The Panda arm as shipped: joint damping that some engines ignore (a known,
    explained difference)."""
    from tests.e2e.test_cli import _erd

    out = tmp_path_factory.mktemp("plots") / "d"
    proc = run_cli("diagnose", _erd("panda_description/urdf/panda.urdf"), "--out", out,
                   "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _check_page(out, shot):
    """Open ``out/index.html`` (full page), apply the report rules; returns what the
    browser drew and the rows' relative-error cells."""
    def check(page):
        rules = assert_report_rules(page)
        drawn = page.evaluate(DRAWN)
        rows = page.evaluate("""() => Array.from(document.querySelectorAll('tr[id^="rec-"]'))
          .map(tr => { const c = tr.querySelector('td.rel');
                       return [tr.id, tr.className, c ? c.textContent : null,
                               c ? c.hasAttribute('data-against-zero') : null]; })""")
        return rules, drawn, rows

    return open_report(out / "index.html", check, shot, full_page=True)


def test_qualify_report_charts(qualify):
    html = (qualify / "index.html").read_text()
    assert (qualify / figures.ASSET).read_bytes() == figures.plotly_js()
    assert "<svg" not in html  # no pre-drawn images: every chart is data
    rules, drawn, rows = _check_page(qualify, "report-plots-qualify-full.png")
    assert (ARTIFACTS / "report-plots-qualify-full.png").stat().st_size > 100_000
    assert rules["charts"] == len(drawn) == len(chart_specs(html)) >= 30
    empty = [c["title"] for c in drawn if not _has_data(c)]
    assert not empty, empty
    records = json.loads((qualify / "records.json").read_text())

    # a stage chart over fixtures lists exactly the fixtures that have records for it
    want = _stage_quantity_fixtures(records)
    by_fixture = [c for c in drawn if c["xtitle"] == "fixture"]
    assert {c["title"] for c in by_fixture} >= {"mass_matrix", "frame_pose", "total_mass",
                                                "contact_force", "constrained_vdot"}
    for c in by_fixture:
        assert set(c["categories"]) == want[(c["title"], _kind(c))], c["title"]
        assert len(c["categories"]) > 1, c["title"]  # one fixture: the pairs on the x axis
        plotted = {x for t in c["traces"] if not t["ref"] for x in t["x"]}
        assert plotted == set(c["categories"]), c["title"]
    # the contact stage's 31 quantities: legible charts, none a strip of panels (a case's
    # rows judged by their relative error share a chart, its rows judged by their |Δ| one
    # per unit)
    contact = [r for r in records if r["stage"] == "contact" and r["max_rel"] is not None]
    assert len({r["quantity"] for r in contact}) > 20
    assert sum(1 for c in drawn if c["title"] in {r["quantity"] for r in contact}
               or re.match(r"^\w+ \((ball|box|rod)\)", c["title"])) <= 24
    # a row judged by its atol is drawn against it: |Δ| on a linear axis with the atol
    (samples,) = [c for c in drawn if c["title"].endswith("stick_to_slip_samples")]
    assert _kind(samples) == "absolute"
    ref = [t for t in samples["traces"] if t["ref"]]
    assert [t["name"] for t in ref] == ["atol 1"]
    assert max(v for t in samples["traces"] if not t["ref"] for v in t["y"]) <= ref[0]["y"][0]

    # replay q(t): lines named after the case's joints, a legend, rad or m
    manifest = json.loads((qualify / "manifest.json").read_text())
    joints = {s[0] for case in manifest["replay"]["cases"].values()
              for s in case.get("layout", [])}
    qt = [c for c in drawn if c["title"].startswith("q(t)")]
    assert len(qt) >= 4
    for c in qt:
        names = [t["name"] for t in c["traces"]]
        assert c["showlegend"] and c["legend_entries"] == len(names), c["title"]
        assert all(n.split(" ")[0] in joints for n in names), names
        assert re.search(r"\[(rad|m|–)\]$", c["ytitle"]), c["ytitle"]
    chain7 = [c for c in qt if "joint angles" in c["title"] and len(c["traces"]) == 6]
    assert chain7, [(c["title"], len(c["traces"])) for c in qt]  # j5 is prismatic: [m]
    assert any(c["ytitle"].endswith("[m]") and [t["name"] for t in c["traces"]] == ["j5"]
               for c in qt)

    # relative-error cells: class rel, and for a check against zero no number
    recs = {r["id"]: r for r in records}
    anchors = {"rec-" + re.sub(r"[^A-Za-z0-9_.:-]", "_", i): r for i, r in recs.items()}
    zero = 0
    for rid, cls, text, against in rows:
        r = anchors[rid]
        is_zero = r["max_rel"] is None and r["max_abs"] is not None
        assert against == is_zero, rid
        if is_zero:
            zero += 1
            assert text == "undefined (against 0)", (rid, text)
        # harness and native refinement rows are marked apart
        if r["quantity"] == "refinement":
            kind = "run-native" if "/replay/native/" in r["id"] else "run-harness"
            assert kind in cls.split(), (rid, cls)
    assert zero > 0

    # run settings are key/value tables, not Python dicts
    start = html.index('<section id="replay">')  # the section runs to the next top one
    replay = html[start:html.index("<section id=", html.rindex('<section class="replay-case"'))]
    assert "{'" not in _html.unescape(replay)
    assert replay.count('<table class="settings">') >= 5


def test_qualify_report_weight_and_every_record_reachable(qualify):
    """The catalog qualification's page stays light: at most 1.5 MB (its bytes on disk;
    plotly.min.js is loaded from beside it, never embedded: one script reference), and
    every record of its judged stages is in it, the passing ones nothing links to drawn
    from its compact JSON when their table is opened."""
    page = qualify / "index.html"
    html = page.read_text()
    assert page.stat().st_size <= 1_500_000, page.stat().st_size
    assert html.count(f'<script src="{figures.ASSET}"></script>') == 1
    records = json.loads((qualify / "records.json").read_text())
    judged = [r for r in records if r["stage"] != "diagnosis"]

    def opened(page):
        page.locator("details").evaluate_all("els => els.forEach(e => e.open = true)")
        page.wait_for_timeout(300)
        return page.evaluate("""() => [
          document.querySelectorAll('tr[id^="rec-"]').length,
          document.querySelectorAll('table.records-more-table tbody tr').length,
          Array.from(document.querySelectorAll('table.records-more-table tbody tr'))
            .every(tr => tr.children.length === 11)]""")

    static, drawn, shaped = open_report(page, opened, "report-plots-records-opened.png")
    assert static + drawn == len(judged) and drawn > static and shaped


def test_qualify_report_stand_alone_and_progress(qualify, tmp_path):
    """``harness report`` re-renders in place with plotly.min.js beside the page and
    prints its progress lines; ``--out FILE`` is one stand-alone file that draws its
    charts with nothing beside it."""
    (qualify / figures.ASSET).unlink()
    proc = run_cli("report", qualify)
    assert proc.returncode == 0, proc.stderr
    assert (qualify / figures.ASSET).read_bytes() == figures.plotly_js()
    lines = [ln for ln in proc.stderr.splitlines() if "report: stage " in ln]
    assert any(re.match(r"^\[\s*\d+\.\ds\] report: stage contact \(\d+/\d+\)$", ln)
               for ln in lines), proc.stderr
    quiet = run_cli("report", qualify, "--quiet")
    assert quiet.returncode == 0 and "report: stage" not in quiet.stderr
    alone = tmp_path / "alone"
    alone.mkdir()
    target = alone / "report.html"
    assert run_cli("report", qualify, "--out", target, "--quiet").returncode == 0
    assert sorted(p.name for p in alone.iterdir()) == ["report.html"]
    n = len(chart_specs(target.read_text()))

    def check(page):
        assert_report_rules(page)
        return int(page.get_attribute("html", "data-plots-drawn"))

    assert open_report(target, check, "report-plots-standalone.png") == n
    shutil.rmtree(alone)


def test_diagnose_report_charts(diagnosed):
    html = (diagnosed / "index.html").read_text()
    assert html.index('<section id="diagnosis">') < html.index('<section id="ladder-section">')
    rules, drawn, rows = _check_page(diagnosed, "report-plots-diagnose-full.png")
    assert rules["charts"] == len(drawn) >= 10
    assert not [c["title"] for c in drawn if not _has_data(c)]
    records = json.loads((diagnosed / "records.json").read_text())
    want = _stage_quantity_fixtures(records)
    for c in drawn:
        if c["xtitle"] == "fixture":
            assert set(c["categories"]) == want[(c["title"], _kind(c))], c["title"]
    # one fixture: its charts list the engine pairs, the fixture in the title
    assert not [c["title"] for c in drawn if c["xtitle"] == "fixture"]
    # the as-is damping difference is drawn: forward dynamics above its rtol
    fd = next(c for c in drawn if c["title"].startswith("forward_dynamics ("))
    ref = next(t for t in fd["traces"] if t["ref"])
    assert max(v for t in fd["traces"] if not t["ref"] for v in t["y"] if v) > ref["y"][0]
    # failing tables open, passing folded (explanation first already checked above)
    assert rules["zero_cells"] > 0

    def folded(page):
        return page.evaluate("""() => Array.from(document.querySelectorAll(
          'details.records')).map(d => [d.classList.contains('records-attention'), d.open])""")

    states = open_report(diagnosed / "index.html", folded, "report-plots-diagnose.png")
    assert states and all(is_open == attention for attention, is_open in states)
