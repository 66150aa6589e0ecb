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

TABLE_VERSION = "2026.12.5"


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
    # stage 0 read-back, element by element (harness/stages/identity.py)
    ("model_identity", "body_inertia"): Tolerance(1e-13, 1e-10, "Each body's dynamic "
        "parameters (m, m·c, I about the body origin; world axes, neutral) as the engine "
        "holds them. Pinocchio keeps no separate inertia for a moving joint's child link "
        "that has links merged into it: it is its joint's inertia minus theirs, exact to "
        "eps × the group's parameters — measured ≤ 1e-14 (kg, kg·m, kg·m²) over every "
        "example-robot-data URDF (a 1e-6 kg placeholder base in an 80 kg group); atol "
        "1e-13 covers robots up to ~1 t. Otherwise round-off (~1e-16 relative)."),
    ("model_identity", "joint_axis"): Tolerance(_FLOOR, 1e-10, "Joint axis in world axes "
        "at neutral: products of parsed rotations, round-off only (~1e-16)."),
    ("model_identity", "joint_placement"): Tolerance(1e-15, 1e-10, "Joint frame at "
        "neutral [m | rotation entries]: composed placements, round-off only; 1e-15 m "
        "absorbs entries that are zero by structure."),
    ("model_identity", "joint_limits"): Tolerance(0.0, 1e-12, "Position limits: every "
        "parser reads the same decimal strings into doubles (MuJoCo converts degrees "
        "itself); only an MJCF in degrees costs a multiplication's round-off."),
    ("model_identity", "joint_damping"): Tolerance(0.0, 1e-12, "Damping the engine applies "
        "in its dynamics: parsed decimals, exact; an engine that holds damping but ignores "
        "it differs by 100 %."),
    ("model_identity", "joint_friction"): Tolerance(0.0, 1e-12, "Coulomb friction the "
        "engine applies (MuJoCo frictionloss): parsed decimals, exact."),
    ("model_identity", "joint_armature"): Tolerance(0.0, 1e-12, "Armature (Drake: rotor "
        "inertia × gear², gear 1): parsed decimals, exact."),
    # stage 1: kinematics
    ("kinematics", "frame_pose"): Tolerance(_FLOOR, 1e-10, _EXACT),
    ("kinematics", "frame_jacobian"): Tolerance(_FLOOR, 1e-10, _EXACT),
    # stage 2: unconstrained dynamics
    ("dynamics", "mass_matrix"): Tolerance(_FLOOR, 1e-10, _EXACT),
    ("dynamics", "bias_forces"): Tolerance(_FLOOR, 1e-10, _EXACT),
    ("dynamics", "forward_dynamics"): Tolerance(_FLOOR, 1e-10, _EXACT + " Accelerations "
        "carry cond(M)·eps: worst measured 1e-14 on tree_floating."),
    ("dynamics", "inverse_dynamics"): Tolerance(_FLOOR, 1e-10, _EXACT),
    # diagnosis of as-is models (harness/diagnose.py): engine pairs as-is, without one
    # known cause, without all of them; the same states as stage 2
    ("diagnosis", "mass_matrix"): Tolerance(_FLOOR, 1e-10, "As stage 2: with a cause "
        "removed, engines that differed only by it agree to the parity claim."),
    ("diagnosis", "bias_forces"): Tolerance(_FLOOR, 1e-10, "As stage 2 (h, no damping)."),
    ("diagnosis", "forward_dynamics"): Tolerance(_FLOOR, 1e-10, "As stage 2."),
    ("diagnosis", "inverse_dynamics"): Tolerance(_FLOOR, 1e-10, "As stage 2."),
    # thresholds on dimensionless ratios: atol is the bound, rtol unused
    ("diagnosis", "explained_share"): Tolerance(0.01, 0.0, "A cause explains a difference "
        "when removing it alone leaves ≤ 1 % of it (share ≥ 99 %); it contributes when it "
        "removes ≥ 1 %; below that its effect is not distinguished from the others'."),
    ("diagnosis", "round_trip"): Tolerance(1e-5, 0.0, "Read-back values that differ from "
        "the declared ones beyond stage 0's tolerance but by ≤ 1e-5 relative are the mark "
        "of decimals rounded in a written file (MuJoCo's XML writer keeps ~6 significant "
        "digits: ~1e-7); larger differences are physical, not rounding."),
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
    ("conformance", "lie_jacobian"): Tolerance(1e-11, 0.0, "SE(3) dexp⁻¹ "
        "(conventions.se3_right_jacobian_inv) times Pinocchio's Jexp6 against I: Pinocchio "
        "switches to its Taylor series at a larger angle than the harness, which costs "
        "it up to ~6e-13 near |φ| = 0.01 (the harness's series are exact to 1e-16 there); "
        "elsewhere ≤ 1e-15."),
    ("conformance", "adaptive_reference"): Tolerance(1e-10, 0.0, "DOP853 at rtol = atol "
        "= 1e-12 on the harness chart against a closed-form rigid-body motion over 1 s: "
        "global error ~1e-12 expected; 1e-10 still tells a broken chart (O(h²) errors of "
        "1e-4) from a working one."),
    # stage 5: open-loop replay (harness/replay.py). Units: the replayed state x = [q, v]
    # in SI (m, rad, m/s, rad/s), energies in J, orders dimensionless.
    ("replay", "trajectory"): Tolerance(1e-9, 0.0, "Engine pair, same harness integrator "
        "and step: only the engines' forward dynamics differ (≤ 1e-14 relative, stage 2), "
        "and a stable replay carries that difference along with little growth: measured "
        "≤ 2e-12 on chain7 over 2 s. 1e-9 absolute is the product's replay claim; a "
        "sensitive motion leaves the band — that time is its agreement horizon."),
    ("replay", "refinement"): Tolerance(1e-6, 1e-6, "Refinement gate: halving the step "
        "(or tightening rtol/atol 100×) must move no coordinate of the replayed trajectory "
        "by more than 1e-6 (+1e-6·|x|) — a µm or µrad, below what a reviewer reads off a "
        "fitted motion. Beyond it the answer depends on the step, not the physics, and "
        "the run is 'unconverged'. RK4 at dt = 1e-3 moves the catalog replays by ≤ 1e-9."),
    ("replay", "native"): Tolerance(1e-6, 1e-6, "An engine's own stepping (MuJoCo RK4, "
        "Crocoddyl RK4, Drake RK5 at dt ≤ 2e-3; all order ≥ 4) against its own refined "
        "harness RK4 run: global errors ≤ 1e-8 measured on chain7; 1e-6 is the refinement "
        "gate's size, so a first-order native stepper (Euler, error ~1e-2 at 1e-3) trips "
        "the gate instead of passing, and a wrong force frame or a missing damping term "
        "(≥ 1e-3) fails."),
    ("replay", "energy_balance"): Tolerance(1e-7, 1e-8, "E(t) − E(t0) against the work "
        "∫τᵀv − ∫vᵀDv integrated with the same stages: RK4 at dt = 1e-3 keeps the "
        "residual at its truncation error (~1e-10 J on the catalog, energies of 1-50 J); "
        "1e-7 J + 1e-8 relative flags a model whose M, gravity or damping disagrees with "
        "the engine's dynamics."),
    ("replay", "convergence_order"): Tolerance(0.3, 0.0, "Observed order of convergence "
        "(log error ratio over a halving of h, state error against a DOP853 reference at "
        "rtol 1e-13) within ±0.3 of the method's order (1 Euler, 4 RK4): the asymptotic "
        "regime of a smooth problem; a missing manifold correction drops RK4 to 2."),
    ("replay", "order_refinement"): Tolerance(0.3, 0.0, "Gate of a convergence row: the "
        "order from the next finer pair of steps may differ by ≤ 0.3, else the sweep is "
        "not yet asymptotic (or already at round-off) and the row is 'unconverged'."),
    ("replay", "twin_perturbation"): Tolerance(1e-10, 0.0, "Horizon mode: the twin run's "
        "v0 differs by 1e-10 rad/s (or m/s, spread over every coordinate): the size of "
        "difference the stage-2 parity claim (1e-10 relative) cannot exclude. The knots "
        "before the twin leaves the trajectory band are the predictability window."),
    ("replay", "growth_window"): Tolerance(1e-12, 0.0, "Finite-time Lyapunov estimate: "
        "least-squares slope of ln(pair error) over the knots whose error lies above this "
        "atol (1e-12: above the round-off floor of a pair, measured 1e-14-1e-13) and below "
        "replay/growth_saturation."),
    ("replay", "growth_saturation"): Tolerance(1e-3, 0.0, "Upper end of the growth "
        "window: at 1e-3 (m, rad, m/s, rad/s) the linearisation behind exponential growth "
        "no longer holds and the error saturates at the size of the motion."),
}


# Model import (fixtures/urdf_import.py, fixtures/mjcf_import.py), checked by unit tests.
TABLE.update({
    ("import", "roundtrip"): Tolerance(1e-15, 0.0, "Spec → URDF → spec: numbers are "
        "written with repr and read back exactly; 1e-15 [SI] only absorbs the rpy ↔ matrix "
        "conversion of rotated frames."),
    ("import", "rotated_inertia"): Tolerance(1e-17, 0.0, "An <inertial> rpy rotates the "
        "tensor (R I Rᵀ): one 3x3 product of ~0.01 kg·m² entries, round-off ~1e-18."),
    ("import", "axis"): Tolerance(1e-16, 0.0, "A non-unit URDF axis is normalised: one "
        "division, round-off ~1e-17."),
    ("import", "group_inertia_urdf"): Tolerance(1e-14, 0.0, "declared_group_inertias of "
        "a spec read back from its own URDF: parallel-axis sums of exact inputs."),
    ("import", "group_inertia_mjcf"): Tolerance(1e-12, 0.0, "A spec read back from MuJoCo's "
        "compiled model: MuJoCo stores principal moments + frame (eigen-decomposition) and "
        "body quaternions, ~1e-13 on the catalog."),
})


def lookup(stage: str, quantity: str) -> Tolerance:
    try:
        return TABLE[(stage, quantity)]
    except KeyError:
        raise KeyError(f"no tolerance for ({stage}, {quantity}) in harness/tolerances.py")


# In-house fitter (harness/fit/, tests/unit/test_collocation.py, bench/fit_benchmarks.py).
TABLE.update({
    ("fit", "jacobian_fd"): Tolerance(1e-6, 1e-6, "Analytic sparse constraint Jacobian "
        "against central differences (step 1e-6) of the constraints, norm-wise per "
        "constraint row: round-off 1e-16·|f|/1e-6 with |f| ≤ 1e4 (mass matrix times "
        "(x_i − x_i−1)/h at h = 0.01) gives ≤ 1e-6 of the row's largest entry (1e2-1e4); a "
        "wrong chain-rule coefficient (e.g. 1/h vs 1/(2h)) is O(1)."),
    ("fit", "jacobian_fd_nonzero"): Tolerance(1e-7, 0.0, "A central-difference Jacobian "
        "entry larger than this is a true nonzero (difference noise is ~1e-9 here); every "
        "such entry must be in the declared structure."),
    ("fit", "hessian_fd"): Tolerance(1e-5, 1e-6, "Lagrangian Hessian against central "
        "differences (step 1e-6) of the analytic Lagrangian gradient, norm-wise per row; "
        "gradient entries up to ~1e4 (1/h² smoothness, whitened 1/σ² terms, λ·M/h), "
        "difference noise ~1e-16·1e4/1e-6 ≈ 1e-6; also FD of an FD Jacobian (articulated "
        "residual, steps 1e-6 and 1e-5)."),
    ("fit", "collocation_order"): Tolerance(0.3, 0.0, "Observed order (log2 of the max "
        "state error ratio over a halving of h on ẍ = −x against cos t) within ±0.3 of "
        "the method's order (1 backward Euler, 2 midpoint and trapezoidal, 4 "
        "Hermite–Simpson) in the asymptotic regime."),
    ("fit", "same_optimum"): Tolerance(1e-6, 0.0, "Threshold on the relative difference "
        "|p/p_ref − 1| (issue #8): every start reaches the "
        "optimum of the start at the truth, identified parameter equal to 1e-6 relative "
        "(IPOPT tol 1e-8 leaves ~1e-10 relative scatter, measured)."),
    ("fit", "pendulum_p_n1000"): Tolerance(5e-3, 0.0, "Threshold on |p/p_true − 1| "
        "(issue #8): identified p within 0.5% "
        "of the truth at N = 1000 (σ = 0.05 rad; the estimator's standard error is "
        "~0.1%)."),
    ("fit", "pendulum_p_n5000"): Tolerance(2e-3, 0.0, "Threshold on |p/p_true − 1| "
        "(issue #8): identified p within 0.2% "
        "of the truth at N = 5000."),
    ("fit", "balance_gains"): Tolerance(5e-2, 0.0, "Threshold on |k/k_true − 1| (issue "
        "#8): each of the 8 feedback gains within 5% of the truth (measurement noise only); "
        "also used for the oscillator's k and c in the known/unknown-parameter test."),
    ("fit", "data_rk4_vs_dop853"): Tolerance(1e-8, 0.0, "Balance data by RK4 at h/8 "
        "against DOP853 (rtol 1e-10) per sample interval: RK4 local error ~(|λ| h/8)^5 "
        "with |λ| ≈ 10 rad/s, measured 3e-10 rad over 3 s; far below the 1e-3 rad noise."),
    ("fit", "fitted_state"): Tolerance(0.01, 0.0, "Fitted unmeasured state (rad/s) of a "
        "collocation fit against the truth, noise-free data at h = 0.01 s: midpoint "
        "discretisation error O(h²)·|ẍ|~1e-3; a wrong inverse-dynamics residual is O(1)."),
})
