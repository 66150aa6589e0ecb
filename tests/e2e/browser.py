"""Shared browser checks for every report: headless Debian Chromium driven by Playwright.

``open_report(path, check, shot)`` opens a page (nothing may be fetched from outside
file://, no console error may occur), waits for the charts to be drawn, runs
``check(page)``, saves a screenshot under test-artifacts/ and returns check's result.

``assert_report_rules(page)`` is what every report must satisfy:
* a contents list ``<nav id="contents">`` with links, the first block of the page after the
  title;
* every chart drawn (plotly) has at least one axis whose title carries a unit in brackets
  ``[...]``, and no axis title is empty;
* no cell marked as a relative error (``td.rel``) shows a number for a check against zero
  (``data-against-zero``).
"""
from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.conftest import ROOT

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
UNIT = re.compile(r"\[[^\]]+\]")


def open_report(html_path: Path, check, shot: str, *, width: int = 1300, height: int = 900,
                full_page: bool = False):
    """Open ``html_path`` in Chromium, run ``check(page)``; assert no console error and no
    request outside file://."""
    assert CHROMIUM.exists(), "Chromium missing: scripts/install-chromium.sh installs it"
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            errors, requests = [], []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(Path(html_path).resolve().as_uri())
            page.wait_for_load_state("load")
            if page.locator("div.plot[data-spec]").count():
                page.wait_for_selector("html[data-plots-drawn]", timeout=60_000)
            result = check(page)
            page.screenshot(path=str(ARTIFACTS / shot), full_page=full_page)
        finally:
            browser.close()
    assert errors == [], errors
    assert all(u.startswith("file://") for u in requests), requests  # nothing fetched
    return result


def chart_axes(page) -> list:
    """[(chart title, [axis titles])] of every drawn chart on the page."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('div.plot'))
      .map(el => {
        const L = el.layout || {};
        const axes = Object.keys(L).filter(k => /^[xy]axis\\d*$/.test(k))
          .filter(k => L[k].visible !== false)
          .map(k => (L[k].title && L[k].title.text) || "");
        const t = ((L.title && L.title.text) || "").replace(/<br>/g, " ");
        return [t, axes, !!el._fullLayout];
      })""")


def assert_report_rules(page) -> dict:
    """The rules every report obeys (module docstring); returns counts for the caller."""
    nav = page.locator("nav#contents")
    assert nav.count() == 1, "no <nav id='contents'>"
    assert nav.locator("a").count() >= 2, "the contents list has no links"
    charts = chart_axes(page)
    for title, axes, drawn in charts:
        assert drawn, f"chart {title!r} was not drawn"
        assert axes and all(a.strip() for a in axes), f"chart {title!r}: untitled axis {axes}"
        assert any(UNIT.search(a) for a in axes), f"chart {title!r}: no axis with a unit {axes}"
    zero_cells = page.locator("td.rel[data-against-zero]")
    for i in range(zero_cells.count()):
        text = zero_cells.nth(i).inner_text()
        assert not re.search(r"\d\.\d+e[+-]\d+|\d+\.\d+", text), \
            f"a relative error is shown for a check against zero: {text!r}"
    return {"charts": len(charts), "zero_cells": zero_cells.count()}
