"""Native contact rows (harness/contact_native.py): every engine that has a native
contact model reports its rows with a law statement, its parameters, its error against
the closed form and its penetration; the others are listed as not provided. Nothing is
asserted about the size of a native error (it is reported, never tuned to pass) beyond
its being a finite measurement of the right case."""
from __future__ import annotations

import json
import math

from harness.core.tolerances import lookup
from harness.model import registry
from harness.stages.contact.native import side_by_side


def test_native_rows_present_with_statements():
    rows = side_by_side(engines=("mujoco", "drake", "pinocchio", "crocoddyl"),
                        cases=("rolling_push",))
    by_engine = {}
    for r in rows:
        by_engine.setdefault(r["engine"], []).append(r)
    # Pinocchio constraintDynamics and Crocoddyl's contact forward dynamics: exact native
    # solvers (rolling a_x within the contact/rolling bound, 1e-9 relative)
    for e, api in (("pinocchio", "constraintDynamics"),
                   ("crocoddyl", "DifferentialActionModelContactFwdDynamics")):
        (row,) = by_engine[e]
        assert row["status"] == "measured" and api in row["statement"]
        assert row["rel_err"] <= lookup("contact", "rolling").rtol, row
    for e in ("mujoco", "drake"):
        got = by_engine[e]
        variants = registry.adapter_class(e).NATIVE_CONTACT_VARIANTS
        assert [r["variant"] for r in got] == [v[0] for v in variants]
        for r in got:
            assert r["status"] == "measured", r.get("reason")
            assert r["quantity"] == "a_x_mps2" and r["analytic"] == 1.0 / 1.4
            assert math.isfinite(r["measured"])
            assert r["rel_err"] == abs(r["measured"] - r["analytic"]) / r["analytic"]
            assert r["max_penetration_m"] > 0 and len(r["statement"]) > 60
            assert r["settings"]
            json.dumps({k: v for k, v in r.items() if k != "series"}, default=float)
    assert "solref" in by_engine["mujoco"][0]["statement"]
    assert "Hunt–Crossley" in by_engine["drake"][0]["statement"]
    # the stiffer MuJoCo variant penetrates less than the defaults (its stated purpose)
    m = by_engine["mujoco"]
    assert m[1]["max_penetration_m"] < m[0]["max_penetration_m"]
