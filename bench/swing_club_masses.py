"""How the swing fit's impact figures move with the club's assumed masses: the quick fit
(harness/swing/pipeline.py, ``QUICK``) of a capture with the club's head at several masses
[kg], the whole club's mass kept (``SwingSettings.club_masses_kg``, the CLI's
``--club-masses``). Per head mass: the smash factor, the fitted club-head speeds before
and after contact against the measured ones [%], the marker maximum from the top to
impact [mm] and the fit's cost (the markers cannot prefer a mass when the costs agree).
The smash factor's slope per 10 g of head closes the table (docs/swing/impact.md "What the
club's assumed masses do to it").

    .venv/bin/python bench/swing_club_masses.py [CAPTURE.c3d] [--heads 0.19,0.20,0.21]
        [--total 0.31] [--grip weld|hinge]

Each fit takes about half a minute to a minute on the 2-core machine.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from harness.swing import pipeline  # noqa: E402
from harness.swing.summary import SwingSummary  # noqa: E402


def one(capture, total: float, head: float, grip: str) -> dict:
    """The quick fit with the club's masses (total, head) [kg]: its impact figures."""
    s = dataclasses.replace(pipeline.QUICK, club_masses_kg=(total, head), grip=grip)
    with tempfile.TemporaryDirectory() as d:
        fs = pipeline.fit_capture(capture, Path(d), s, say=lambda m: None)
        summary = SwingSummary.of(pipeline.document(fs, Path(d)))
    im = summary.fit.impact
    pct = {w: 100.0 * (im.speeds_mps(w)[0] / im.speeds_mps(w)[1] - 1.0)
           for w in ("pre", "post")}
    return {"head": head, "smash": im.smash_factor, "pre": pct["pre"],
            "post": pct["post"],
            "max_mm": 1e3 * summary.fit.marker_max_top_to_impact_m,
            "cost": fs.fit.result.components["total"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("capture", nargs="?", default=str(ROOT / "data" / "swing" / "driver.c3d"))
    ap.add_argument("--heads", default="0.19,0.20,0.21", help="head masses [kg]")
    ap.add_argument("--total", type=float, default=0.31, help="the whole club's mass [kg]")
    ap.add_argument("--grip", choices=("weld", "hinge"), default="weld")
    args = ap.parse_args()
    heads = [float(x) for x in args.heads.split(",")]
    print(f"# {args.capture}: quick fit, --grip {args.grip}, club {args.total:g} kg")
    print(f"{'head kg':>8} {'smash':>7} {'pre %':>7} {'post %':>7} {'max mm':>7} {'cost':>8}")
    rows = []
    for h in heads:
        r = one(args.capture, args.total, h, args.grip)
        rows.append(r)
        print(f"{r['head']:8.3f} {r['smash']:7.3f} {r['pre']:+7.1f} {r['post']:+7.1f} "
              f"{r['max_mm']:7.1f} {r['cost']:8.1f}", flush=True)
    if len(rows) >= 2:
        slope = np.polyfit([r["head"] for r in rows], [r["smash"] for r in rows], 1)[0]
        mid = float(np.mean([r["smash"] for r in rows]))
        print(f"# smash factor slope: {0.01 * slope:+.4f} per 10 g of head "
              f"({100 * 0.01 * slope / mid:+.1f} % of its mean)")


if __name__ == "__main__":
    main()
