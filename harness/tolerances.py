"""The one versioned table of tolerances and thresholds. Every comparison looks its
tolerance up here by (stage, quantity); no test or stage writes an inline tolerance.

A comparison of arrays a, b over N samples passes when, for every sample s,
    max|a_s − b_s| ≤ atol + rtol · max(max|a_s|, max|b_s|)
(norm-wise relative error; element-wise relative error is meaningless for entries that
are zero by structure, e.g. off-diagonal M terms). ``max_rel`` in a record is the worst
max|a_s − b_s| / max(max|a_s|, max|b_s|) over samples.

Bump TABLE_VERSION whenever a number or reason changes; evidence records it.
"""
from __future__ import annotations

from dataclasses import dataclass

TABLE_VERSION = "2026.12.2"


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float
    reason: str


# Absolute floor for samples that are zero by structure (e.g. h = 0 when every com lies on
# its joint axis): engines then return round-off such as 1e-37 where another returns 0,
# which is 100 % "relative" error. 1e-30 (in the quantity's SI unit) accepts that and
# nothing of physical size.
_FLOOR = 1e-30
_EXACT = ("Exact rigid-body algorithms in double precision: engines differ only by "
          "floating-point operation order; measured ≤ 1e-14 relative on the catalog and "
          "on example-robot-data robots, 1e-10 leaves four orders of margin and is the "
          "product's parity claim.")

TABLE: dict = {
    # stage 0: model identity
    ("model_identity", "total_mass"): Tolerance(0.0, 1e-12, "Sum of parsed masses; "
        "parsers read the same decimal strings, only summation order differs."),
    ("model_identity", "group_inertia"): Tolerance(1e-15, 1e-10, "Composite inertial "
        "parameters of each joint's rigid group at neutral. MuJoCo stores inertia as "
        "principal moments + frame (an eigen-decomposition), which costs ~1e-16 "
        "relative; atol 1e-15 kg·m² absorbs round-off on zero entries of massless groups."),
    ("model_identity", "mass_matrix_neutral"): Tolerance(_FLOOR, 1e-10, _EXACT),
    # stage 1: kinematics
    ("kinematics", "frame_pose"): Tolerance(_FLOOR, 1e-10, _EXACT),
    ("kinematics", "frame_jacobian"): Tolerance(_FLOOR, 1e-10, _EXACT),
    # stage 2: unconstrained dynamics
    ("dynamics", "mass_matrix"): Tolerance(_FLOOR, 1e-10, _EXACT),
    ("dynamics", "bias_forces"): Tolerance(_FLOOR, 1e-10, _EXACT),
    ("dynamics", "forward_dynamics"): Tolerance(_FLOOR, 1e-10, _EXACT + " Accelerations "
        "carry cond(M)·eps: worst measured 1e-14 on tree_floating."),
    ("dynamics", "inverse_dynamics"): Tolerance(_FLOOR, 1e-10, _EXACT),
    # conformance checks of single adapters (tests/conformance)
    ("conformance", "roundtrip"): Tolerance(1e-12, 1e-10, "forward ∘ inverse dynamics "
        "of one engine returns its input up to cond(M)·eps."),
    ("conformance", "finite_difference"): Tolerance(1e-6, 1e-6, "Central differences "
        "with step 1e-6: truncation O(h²) ~1e-12 times curvature, round-off eps/h ~1e-10 "
        "times magnitude; 1e-6 is a wide, still-discriminating bound."),
    ("conformance", "integrate"): Tolerance(1e-14, 1e-12, "q ⊕ v·dt in closed form: "
        "trigonometric round-off only."),
    ("conformance", "analytic"): Tolerance(0.0, 1e-12, "Closed-form solutions (pendulum, "
        "Newton-Euler free body) evaluated in numpy: only round-off differs."),
    ("conformance", "crocoddyl_vs_aba"): Tolerance(0.0, 1e-12, "Crocoddyl forward "
        "dynamics must equal pin.aba (guards the pin 4.1/crocoddyl 3.2.1 ABI mismatch "
        "that silently drops gravity: errors of 10-55 rad/s²)."),
}


def lookup(stage: str, quantity: str) -> Tolerance:
    try:
        return TABLE[(stage, quantity)]
    except KeyError:
        raise KeyError(f"no tolerance for ({stage}, {quantity}) in harness/tolerances.py")
