"""The report in a real browser: headless Debian Chromium driven by Playwright
(tests/e2e/browser.py) opens it with no console errors and nothing fetched, draws its
charts, shows the summary and the stage ladder, and renders hostile names from a user
model as text (no script of theirs runs). Screenshots: test-artifacts/."""
from __future__ import annotations

import json
from dataclasses import replace

from fixtures import catalog
from harness import api
from harness.core import figures
from harness.evidence import bundle as evidence
from harness.model.prepared import PreparedModel
from harness.stages import runner
from tests.conftest import run_cli
from tests.e2e.browser import ARTIFACTS, assert_report_rules, open_report

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'


def _open(page_fn, html_path, shot: str):
    return open_report(html_path, page_fn, shot)


def test_report_opens_with_summary_and_no_console_errors(tmp_path):
    out = tmp_path / "q"
    assert run_cli("qualify", "--out", out, "--quiet").returncode == 0

    def check(page):
        rules = assert_report_rules(page)
        assert rules["charts"] > 0
        assert int(page.get_attribute("html", "data-plots-drawn")) == rules["charts"]
        assert page.locator("#summary h2").inner_text() == "Summary"
        # the banner is the page's one verdict: the summary does not repeat it
        assert page.locator("#summary-verdict").count() == 0
        assert page.locator(".banner").count() == 0
        assert page.locator("#verdict").get_attribute("data-exit-code") == "0"
        assert page.locator("#verdict .verdict-words").inner_text().startswith("qualified: ")
        rows = page.locator("#ladder tbody tr").count()
        recs = json.loads((out / "records.json").read_text())
        assert rows == len({(r["fixture"], r["stage"]) for r in recs})  # one per ladder rung
        return page.locator("#ladder thead th").count()

    assert _open(check, out / "index.html", "report-summary.png") >= 8
    assert (ARTIFACTS / "report-summary.png").stat().st_size > 10_000


def test_hostile_names_render_as_text(tmp_path):
    s = catalog.get("double_pendulum")
    s = replace(s, joints=(replace(s.joints[0], name=HOSTILE), s.joints[1]),
                frames=(replace(s.frames[0], name='"><b id="injected">x</b>'),))
    model = PreparedModel(s, f"user file {HOSTILE}.urdf", "0" * 64,
                          (f"note with {HOSTILE}",))
    res = runner.run([model], ["pinocchio", "drake"], samples=2)
    manifest = evidence.build_manifest(res, {}, ["test"], api.evidence_hooks())
    html = api.render_report(manifest, res.records, None)
    path = tmp_path / "hostile.html"
    path.write_text(html)
    (tmp_path / figures.ASSET).write_bytes(figures.plotly_js())  # its charts draw

    def check(page):
        page.locator("details").evaluate_all("els => els.forEach(e => e.open = true)")
        assert page.evaluate("window.__pwned") is None
        assert page.locator("#injected").count() == 0
        body = page.locator("body").inner_text()
        assert HOSTILE in body  # shown literally, as text
        assert_report_rules(page)
        return True

    assert _open(check, path, "report-hostile-names.png")


def test_contents_and_ladder_links_work_in_the_browser(tmp_path):
    """The contents list is the first thing on the page; a ladder cell's link lands on its
    record row, which the browser shows though its table starts folded (all rows pass)."""
    out = tmp_path / "p"
    assert run_cli("parity", "--fixture", "pendulum", "--out", out, "--quiet").returncode == 0

    def check(page):
        assert page.locator("#contents").is_visible()
        assert page.locator("#contents a").count() >= 5
        link = page.locator("#ladder tbody td a").first
        target = link.get_attribute("href")[1:]
        assert not page.locator(f"[id='{target}']").is_visible()  # folded: every row passed
        link.click()
        page.wait_for_timeout(200)
        return page.locator(f"[id='{target}']").is_visible()

    assert _open(check, out / "index.html", "report-contents.png")
