"""How the swing fit moves when its impulse is held to the ball's collision law: the quick
fit (harness/swing/pipeline.py, ``QUICK``; ``--settings full`` the default full one) of a
capture with the impulse prior about zero (σ 4.6 N·s) and about the collision law's
impulse at the fit's own pre-contact state (re-centred after the first fit's;
``SwingSettings.sigma_residual_ns``: a prior on the residual impulse Λ − Λ_law, N·s).
Per setting: the smash factor (the law's), the residual impulse [N·s], the restitution
the fitted impulse implies, the fitted club-head speeds before and after contact against
the measured ones [%], the marker RMSE and maximum from the top to impact [mm], the
fit's cost and whether it converged (docs/swing/impact.md "The collision law").

    .venv/bin/python bench/swing_residual_prior.py [CAPTURE.c3d] [--sigmas none,0.1]
        [--settings quick|full]

Each fit takes about half a minute to two minutes on the 2-core machine.
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

from harness.swing import pipeline  # noqa: E402
from harness.swing.summary import SwingSummary  # noqa: E402


def one(capture, sigma: float | str | None,
        base: pipeline.SwingSettings = pipeline.QUICK) -> dict:
    """The fit with settings ``base`` (default the quick ones) and the residual prior's
    scale ``sigma`` [N·s] about the law's impulse ("law": the spread e's prior gives it,
    the default; None: Λ free, the prior about zero): its impact figures."""
    s = (dataclasses.replace(base, impulse_prior="free") if sigma is None else
         dataclasses.replace(base, impulse_prior="law", sigma_residual_ns=None)
         if sigma == "law" else
         dataclasses.replace(base, impulse_prior="law", sigma_residual_ns=float(sigma)))
    with tempfile.TemporaryDirectory() as d:
        fs = pipeline.fit_capture(capture, Path(d), s, say=lambda m: None)
        summary = SwingSummary.of(pipeline.document(fs, Path(d)))
    im = summary.fit.impact
    pct = {w: 100.0 * (im.speeds_mps(w)[0] / im.speeds_mps(w)[1] - 1.0)
           for w in ("pre", "post")}
    b = im.ball
    return {"sigma": sigma, "smash": im.smash_factor,
            "residual": b.residual_impulse_magnitude_Ns,
            "e_fit": b.restitution_implied_by_fit, "pre": pct["pre"], "post": pct["post"],
            "rmse_mm": 1e3 * summary.fit.marker_rmse_top_to_impact_m,
            "max_mm": 1e3 * summary.fit.marker_max_top_to_impact_m,
            "cost": fs.fit.result.components["total"],
            "converged": fs.fit.result.converged}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("capture", nargs="?", default=str(ROOT / "data" / "swing" / "driver.c3d"))
    ap.add_argument("--sigmas", default="none,0.1",
                    help="residual prior scales [N·s], 'none' for the prior about zero, "
                         "'law' for the default (the spread e's prior gives the law's "
                         "impulse)")
    ap.add_argument("--settings", choices=("quick", "full"), default="quick")
    args = ap.parse_args()
    base = pipeline.QUICK if args.settings == "quick" else pipeline.SwingSettings()
    sigmas = [None if x == "none" else x if x == "law" else float(x)
              for x in args.sigmas.split(",")]
    print(f"# {args.capture}: {args.settings} fit")
    print(f"{'σ_res N·s':>10} {'smash':>7} {'|res| N·s':>9} {'e fit':>6} {'pre %':>7} "
          f"{'post %':>7} {'rmse mm':>8} {'max mm':>7} {'cost':>8} converged")
    for sg in sigmas:
        r = one(args.capture, sg, base)
        print(f"{'none' if sg is None else sg if isinstance(sg, str) else f'{sg:g}':>10} "
              f"{r['smash']:7.3f} "
              f"{r['residual']:9.3f} {r['e_fit']:6.2f} {r['pre']:+7.1f} {r['post']:+7.1f} "
              f"{r['rmse_mm']:8.1f} {r['max_mm']:7.1f} {r['cost']:8.1f} {r['converged']}",
              flush=True)


if __name__ == "__main__":
    main()
