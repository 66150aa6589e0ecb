"""`harness parity --stages 4` (contact) end to end: stage records for every engine pair,
analytic records against closed forms, native rows with statements, plots, and a bundle
that `harness verify` recomputes."""
from __future__ import annotations

import json

import numpy as np

from harness import api
from tests.conftest import run_cli
from tests.e2e.test_report_plots import chart_specs, chart_titles


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
    # the page `harness report` renders from the bundle alone is the run's page, byte for
    # byte (the plotted series come from arrays.npz in its sorted order on a re-render):
    # the harness's own series first, then the native ones in the native table's order
    (chart,) = [c for c in chart_specs(html)
                if c["layout"]["title"]["text"] == "Energy of the ball"]
    native = [f"native {r['engine']} {r['variant']}"
              for r in json.loads(str(np.load(out / "arrays.npz")["contact/native/json"]))
              if r["case"] == "ball_drop" and "variant" in r]
    names = [tr["name"] for tr in chart["data"]]
    native = [n for n in native if n in names]
    assert names == sorted(set(names) - set(native)) + native, names
    assert len(native) >= 2 and names[0] == "rigid hybrid (e 0.8)"
    assert run_cli("report", out, "--quiet").returncode == 0
    assert (out / "index.html").read_text() == html
