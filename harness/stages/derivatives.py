"""Stage "derivatives" (opt-in): derivatives of the unconstrained dynamics on the
states of stage 2 (N seeded states; nv canonical; each quantity
(N, nv, nv), rows = outputs):

* dvdot_dq, dvdot_dv, dvdot_dtau: ∂v̇/∂(q, v, τ) of forward dynamics at the sampled τ;
* dtau_dq, dtau_dv, dtau_dvdot: ∂τ/∂(q, v, v̇) of inverse dynamics at the sampled v̇;

∂/∂q w.r.t. the canonical tangent δ (q ⊕ δ = integrate(q, δ, 1)), damping included as in
M v̇ + h = τ − D v. Each engine computes them with its own method (``derivatives_method``:
analytical, automatic_differentiation or finite_difference); an engine pair is compared
with the tolerance of its least exact member (``<quantity>`` for two exact methods,
``<quantity>/finite_difference`` otherwise), and every engine is also compared with
central differences of its own forward/inverse dynamics (``central_differences~<engine>``
rows, tolerance ``<quantity>/central_differences`` or, for a finite-difference engine,
``<quantity>/finite_difference``).
"""
from __future__ import annotations

import numpy as np

from harness.core.derivatives import central_differences
from harness.core.records import Record
from harness.model.protocol import HasDerivatives
from harness.stages.base import Quantity, state_labels

NAME = "derivatives"
REFERENCE = "central_differences"
# step of the central-difference reference [rad | m, rad/s | m/s, N·m | N, rad/s² | m/s²];
# its error bound is stated in harness/core/tolerances.py ("derivatives" entries)
CD_STEP = 1e-3   # Richardson on h and h/2 (harness/core/derivatives.py central_differences)
EXACT_METHODS = ("analytical", "automatic_differentiation")

_memo: dict = {}  # "inputs" -> the Inputs cached for; (id(adapter), kind) -> (N, 3, nv, nv)


def _method(a) -> str:
    return a.derivatives_method if isinstance(a, HasDerivatives) else "unknown"


def _all(a, inputs, kind):
    if _memo.get("inputs") is not inputs:  # a new fixture: forget the last one's arrays
        _memo.clear()
        _memo["inputs"] = inputs
    key = (id(a), kind)
    if key not in _memo:
        n = inputs.q.shape[0]
        if kind == "forward":
            out = [a.forward_dynamics_derivatives(inputs.q[s], inputs.v[s], inputs.tau[s])
                   for s in range(n)]
        elif kind == "inverse":
            out = [a.inverse_dynamics_derivatives(inputs.q[s], inputs.v[s], inputs.vdot[s])
                   for s in range(n)]
        else:
            which, u = (("forward", inputs.tau) if kind == "cd_forward"
                        else ("inverse", inputs.vdot))
            out = [central_differences(a, inputs.q[s], inputs.v[s], u[s], which, CD_STEP)
                   for s in range(n)]
        _memo[key] = (a, np.asarray(out, dtype=float))  # the adapter kept: id stays unique
    return _memo[key][1]


def _block(kind, j):
    return lambda a, inputs: _all(a, inputs, kind)[:, j]


def _variant(a, b=None) -> str:
    """Tolerance-key suffix of a comparison: b None = engine a vs central differences."""
    if _method(a) not in EXACT_METHODS or (b is not None and _method(b) not in EXACT_METHODS):
        return "/finite_difference"
    return "" if b is not None else f"/{REFERENCE}"


def _q(name, kind, j):
    need = f"{kind}_dynamics_derivatives"
    return Quantity(name, _block(kind, j), state_labels, None, need,
                    reference=_block(f"cd_{kind}", j), reference_name=REFERENCE,
                    variant=_variant)


QUANTITIES = (
    _q("dvdot_dq", "forward", 0), _q("dvdot_dv", "forward", 1), _q("dvdot_dtau", "forward", 2),
    _q("dtau_dq", "inverse", 0), _q("dtau_dv", "inverse", 1), _q("dtau_dvdot", "inverse", 2),
)


def summary_line(scored: list[Record]) -> str:
    """The command line's derivatives line (dimensionless relative errors): the worst among
    ``scored`` rows whose difference exceeds their atol (a block that is structurally zero
    has max_rel ~1 from round-off on both sides), and that of the exact-method pairs; ""
    without derivative rows."""
    der = [r for r in scored if r.stage == NAME]
    if not der:
        return ""
    rel = [r for r in der if r.max_abs is not None and r.atol is not None
           and r.max_abs > r.atol] or der
    w = max(rel, key=lambda r: r.max_rel)
    exact = [r for r in rel if "/" not in r.quantity]
    return (f"derivatives: worst relative error {w.max_rel:.3e} ({w.id}, tolerance "
            f"class {w.quantity.partition('/')[2] or 'exact'}; rows whose difference "
            f"exceeds their atol)"
            + (f"; exact-method pairs {max(r.max_rel for r in exact):.3e}" if exact else ""))
