"""`harness parity --stages 4` (contact) end to end: stage records for every engine pair,
analytic records against closed forms, native rows with statements, plots, and a bundle
that `harness verify` recomputes."""
from __future__ import annotations

import json

from harness import api
from tests.conftest import run_cli
from tests.e2e.test_report_plots import chart_titles


def test_parity_contact_stage_bundle(tmp_path):
    out = tmp_path / "contact"
    proc = run_cli("parity", "--fixture", "ball", "--engines", "pinocchio,mujoco",
                   "--stages", "4", "--out", out, "--quiet")
    assert proc.returncode == 0, proc.stderr
    recs = json.loads((out / "records.json").read_text())
    recs = recs if isinstance(recs, list) else recs["records"]
    contact = [r for r in recs if r["stage"] == "contact"]
    assert {r["stage"] for r in recs} == {"contact"}
    pairs = {r["quantity"] for r in contact
             if {r["engine_a"], r["engine_b"]} == {"mujoco", "pinocchio"}}
    assert {"contact_force", "generalized_contact_force", "contact_acceleration"} <= pairs
    analytic = {(r["fixture"], r["quantity"], r["engine_b"]) for r in contact
                if r["engine_a"] == "analytic"}
    for e in ("pinocchio", "mujoco"):
        assert ("ball", "ball_drop.apex_heights_m", e) in analytic
        assert ("ball", "rolling.a_x_mps2", e) in analytic
    assert all(r["status"] == "passed" for r in contact)
    assert api.verify(out) == []
    html = (out / "index.html").read_text()
    assert "Native contact, side by side" in html and "solref" in html
    titles = chart_titles(html)
    assert {"Penetration depth of the ball", "Energy of the ball"} <= set(titles), titles
    assert "Diagnostics per interval" in html
