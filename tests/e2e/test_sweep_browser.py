"""The sweep report (index.html of a sweep folder) in headless Chromium: no console
errors, nothing fetched, heat maps present, and hostile text from case inputs and crash
reasons rendered as text (no script runs). Screenshot: test-artifacts/sweep-report.png."""
from __future__ import annotations

from harness.sweep.executor import SweepResult, _row
from harness.sweep.report import build_document, write_sweep
from tests.e2e.test_browser import HOSTILE, _open


def test_sweep_report_in_browser(tmp_path):
    cases = [{"case_id": i, "speed_mps": s, "angle_deg": a, "mu": mu, "note": HOSTILE}
             for i, (s, a, mu) in enumerate((s, a, mu) for s in (0.5, 1.0, 2.0)
                                            for a in (0.0, 30.0, 60.0) for mu in (0.2, 0.8))]
    rows = [_row(c, "ok", {"penetration_m": 1e-4 * c["speed_mps"] * (1 + c["mu"]),
                           "energy_J": c["angle_deg"] / 60})
            for c in cases if c["case_id"] != 7]
    rows.append(_row(cases[7], "crashed", reason=f"worker process killed by SIGSEGV {HOSTILE}"))
    rows.sort(key=lambda r: r["case_id"])
    doc = build_document("hostile " + HOSTILE, cases, SweepResult(
        rows, {"name": "local", "workers": 2, "timeout_s": 600.0}, 1.0, "now"), {},
        command_line=["harness", "sweep", "contact"])
    out = write_sweep(tmp_path / "s", doc)

    def check(page):
        assert page.evaluate("window.__pwned === undefined")
        assert page.locator("#summary-verdict").inner_text() == \
            "1 case(s) did not finish as expected"
        assert page.locator("#verdict").get_attribute("data-exit-code") == "1"
        assert page.locator("#heatmaps div.plot").count() == 2  # one per varying metric
        cell = page.locator("#bad-cases tbody tr td").nth(4).inner_text()
        assert HOSTILE in cell  # shown as text
        return page.locator("#bad-cases tbody tr").count()

    assert _open(check, out / "index.html", "sweep-report.png") == 1
