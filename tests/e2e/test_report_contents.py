"""Every HTML report the harness writes puts the answer first: a contents list whose every
link lands on an element of the page, a provenance block naming the git commit and the
command line, and in a bundle report what the harness changed in the model right after
the verdict (with a pointer to ``harness diagnose``); failing record tables open, passing
ones folded; ladder cells link to the record rows they show. Parsed with the standard
library's HTML parser (the browser test opens the same pages in Chromium)."""
from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from harness.sweep.executor import SweepResult, _row
from harness.sweep.report import build_document, write_sweep
from tests.conftest import ROOT, run_cli
from tests.e2e.test_cli import _erd
from tests.e2e.test_report_plots import chart_specs

NOT_PASSING = {"failed", "error", "not_scored", "unconverged"}


class Page(HTMLParser):
    """ids, in-page links, all hrefs and, per record-table row, its status classes and
    whether every enclosing <details> is open."""

    def __init__(self, html: str):
        super().__init__()
        self.ids, self.fragments, self.hrefs, self.rows = [], [], [], []
        self.details = []  # stack of open flags
        self.in_nav = False
        self.nav_links = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "nav" and a.get("id") == "contents":
            self.in_nav = True
        if tag == "details":
            self.details.append("open" in a)
        if tag == "a" and "href" in a:
            self.hrefs.append(a["href"])
            if a["href"].startswith("#"):
                self.fragments.append(a["href"][1:])
                if self.in_nav:
                    self.nav_links.append(a["href"][1:])
        if tag == "tr" and (a.get("id") or "").startswith("rec-"):
            self.rows.append((a["id"], set(a.get("class", "").split()),
                              all(self.details) and bool(self.details)))

    def handle_endtag(self, tag):
        if tag == "details" and self.details:
            self.details.pop()
        if tag == "nav":
            self.in_nav = False


def manifest_engines(out) -> list:
    return list(json.loads((out / "manifest.json").read_text())["engines"])


def _head_commit() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def _check_contents(html: str, expect: set) -> Page:
    """The nav comes before any section, names at least ``expect``, and every in-page link
    (nav, ladder, anywhere) lands on an id of the page; the page's own ids are unique."""
    page = Page(html)
    assert html.index('<nav id="contents">') < html.index("<section")
    assert expect <= set(page.nav_links), set(page.nav_links)
    assert len(page.ids) == len(set(page.ids)), "duplicate ids"
    missing = sorted(set(page.fragments) - set(page.ids))
    assert not missing, missing
    assert html.count(f'<code id="git-commit">{_head_commit()}</code>') == 1
    return page


@pytest.fixture(scope="module")
def panda():
    return _erd("panda_description/urdf/panda.urdf")


def test_parity_report_answer_first(tmp_path, panda):
    out = tmp_path / "p"
    p = run_cli("parity", "--urdf", panda, "--out", out, "--quiet")
    assert p.returncode == 0, p.stderr
    html = (out / "index.html").read_text()
    page = _check_contents(html, {"summary", "model-changes", "ladder-section", "provenance",
                                  "stage-model_identity", "stage-dynamics", "apis"})
    cmd = re.search(r'<code id="command-line">(.*?)</code>', html).group(1)
    assert cmd == f"harness parity --urdf {panda} --out {out} --quiet"
    # the mimic joint the file declares (read here from the URDF itself) is named right
    # after the verdict, with the pointer to diagnose
    mimic = [j.get("name") for j in ET.parse(panda).getroot().iter("joint")
             if j.find("mimic") is not None]
    assert mimic
    after = re.search(r'<h2>Summary</h2>\s*<div id="model-changes">(.*?)</div>', html, re.S)
    assert after, "the model-change notice does not open the summary"
    assert "summary-verdict" not in html  # the banner at the top is the one verdict
    for name in mimic:
        assert f"joint {name}: coupled: {name} = " in after.group(1)
    assert f"<code>harness diagnose {panda}</code>" in after.group(1)
    # every matrix cell links to a record row of the page; all rows pass, so all folded
    cells = re.findall(r'<td class="m [a-z_ ]+" data-verdict="[a-z_]+"[^>]*><a href="#(rec-[^"]+)"',
                       html)
    assert cells and set(cells) <= {r[0] for r in page.rows}
    assert page.rows and not any(is_open for _, _, is_open in page.rows)
    # the bundle's files are linked relatively and exist beside the report
    for f in ("records.json", "records.csv", "arrays.npz", "manifest.json"):
        assert f in page.hrefs and (out / f).is_file()
    # records.csv is records.json as a table; an edit of it is caught by verify
    recs = json.loads((out / "records.json").read_text())
    rows = list(csv.DictReader(io.StringIO((out / "records.csv").read_text())))
    assert [r["id"] for r in rows] == [r["id"] for r in recs]
    assert [r["status"] for r in rows] == [r["status"] for r in recs]
    assert all(float(c["max_abs"]) == r["max_abs"] for c, r in zip(rows, recs)
               if r["max_abs"] is not None)
    # charts: one per quantity, the one fixture in its title and the engines on its x
    # axis, units on the value axis, the chart library beside the page
    specs = chart_specs(html)
    quantities = {r["quantity"] for r in recs if r["max_abs"] is not None
                  and r["rtol"] is not None and r["atol"] is not None}
    # and stage 3's two drift charts of the coupled finger's rollouts (over time)
    drift = {"panda: position drift ‖g(q)‖∞", "panda: velocity drift ‖J v‖∞"}
    assert {s["layout"]["title"]["text"] for s in specs} == \
        {f"{q} (panda)" for q in quantities} | drift
    specs = [s for s in specs if s["layout"]["title"]["text"] not in drift]
    for s in specs:
        assert s["layout"]["xaxis"]["title"]["text"] == "engine"
        assert set(s["layout"]["xaxis"]["categoryarray"]) <= set(manifest_engines(out))
        assert s["layout"]["yaxis"]["title"]["text"] in ("max relative error [–]",) or \
            s["layout"]["yaxis"]["title"]["text"].startswith("max |Δ| [")
    assert (out / "plotly.min.js").is_file()
    text = (out / "records.csv").read_text()
    (out / "records.csv").write_text(text.replace(",passed,", ",failed,", 1))
    v = run_cli("verify", out)
    assert v.returncode != 0 and "records.csv" in v.stdout + v.stderr


def test_diagnose_report_explanation_first_failures_open(tmp_path, panda):
    out = tmp_path / "d"
    p = run_cli("diagnose", panda, "--out", out, "--quiet")
    assert p.returncode == 0, p.stderr  # every difference of the Panda has a named cause
    html = (out / "index.html").read_text()
    page = _check_contents(html, {"summary", "diagnosis", "ladder-section", "provenance"})
    assert html.index('<section id="diagnosis">') < html.index('<section id="ladder-section">')
    statuses = {frozenset(c) for _, c, _ in page.rows}
    assert any(c & NOT_PASSING for c in statuses) and any("passed" in c for c in statuses)
    for rid, classes, is_open in page.rows:  # open exactly when the row did not pass
        assert is_open == bool(classes & NOT_PASSING), (rid, classes)


def test_fit_report_contents_and_provenance(tmp_path):
    out = tmp_path / "f"
    p = run_cli("fit", "--problem", "pendulum", "--out", out)
    assert p.returncode == 0, p.stderr
    html = (out / "index.html").read_text()
    page = _check_contents(html, {"fit", "parameters", "convergence", "provenance"})
    assert f'<code id="command-line">harness fit --problem pendulum --out {out}</code>' in html
    assert {"fit.json", "arrays.npz"} <= set(page.hrefs)


def test_sweep_report_contents_and_provenance(tmp_path):
    cases = [{"case_id": i, "speed_mps": s, "mu": mu}
             for i, (s, mu) in enumerate((s, mu) for s in (0.5, 1.0) for mu in (0.2, 0.8))]
    rows = [_row(c, "ok", {"penetration_m": 1e-4 * c["speed_mps"]}) for c in cases]
    doc = build_document("nav", cases, SweepResult(
        rows, {"name": "local", "workers": 1, "timeout_s": 60.0}, 1.0, "now"), {},
        command_line=["harness", "sweep", "contact"])
    out = write_sweep(tmp_path / "s", doc)
    html = (out / "index.html").read_text()
    page = _check_contents(html, {"summary", "heatmaps", "not-ok", "provenance"})
    assert '<code id="command-line">harness sweep contact</code>' in html
    assert "sweep.json" in page.hrefs
