"""The report in a real browser: headless Debian Chromium driven by Playwright opens it
with no console errors, shows the summary and the stage ladder, and renders hostile
names from a user model as text (no script runs). Screenshots: test-artifacts/."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from playwright.sync_api import sync_playwright

from fixtures import catalog
from harness import api
from harness.evidence import bundle as evidence
from harness.model.prepared import PreparedModel
from harness.stages import runner
from tests.conftest import ROOT, run_cli

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'


def _open(page_fn, html_path: Path, shot: str):
    assert CHROMIUM.exists(), "Chromium missing: scripts/install-chromium.sh installs it"
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            errors, requests = [], []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(html_path.resolve().as_uri())
            page.wait_for_load_state("load")
            result = page_fn(page)
            page.screenshot(path=str(ARTIFACTS / shot), full_page=False)
        finally:
            browser.close()
    assert errors == [], errors
    assert all(u.startswith("file://") for u in requests), requests  # nothing fetched
    return result


def test_report_opens_with_summary_and_no_console_errors(tmp_path):
    out = tmp_path / "q"
    assert run_cli("qualify", "--out", out, "--quiet").returncode == 0

    def check(page):
        assert page.locator("#summary h2").inner_text() == "Summary"
        assert page.locator("#verdict").inner_text() == "every scored comparison passed"
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

    def check(page):
        page.locator("details").evaluate_all("els => els.forEach(e => e.open = true)")
        assert page.evaluate("window.__pwned") is None
        assert page.locator("#injected").count() == 0
        body = page.locator("body").inner_text()
        assert HOSTILE in body  # shown literally, as text
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
