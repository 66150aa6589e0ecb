"""Stage-3 rows scored against the round-off of their own terms. Dimension legend: S
states, nv velocities, m constraint rows.

A stage-3 quantity can be zero by structure while each engine sums terms of physical
size: J̇v of a weld or point between two bodies of one chain whose joints between them are
held still (the two frames' classical accelerations cancel), v̇ of a mechanism a weld
locks (f and Jᵀλ cancel). Engines then return round-off where another returns 0, which a
relative bound cannot accept. Such rows are scored per state against

    max(atol, f · T_s) + rtol · scale_s

with T_s the magnitude of the quantity's terms (constraints.py ``drift_terms``: λ·(Σ|v|)²
for J̇v; ``kkt_terms`` for v̇ and λ, the larger of the two engines' for a pair) and f the
table's ``constrained/constraint_drift_terms`` or ``constrained/kkt_terms``. T_s is stored
beside the outputs (``terms/<fixture>/constrained/…``, with the inputs it is computed from)
and ``recompute`` (the stage's ``verify`` hook) computes it again from them. A row whose
verdict the bound decided says so in its reason, with the bound.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.records import Record, compare, memoized, terms_floor
from harness.core.tolerances import Tolerance, lookup
from harness.stages.constrained import constraints as C
from harness.stages.constrained.constraints import NAME

# quantity -> (table entry of its factor f, what its terms are)
TERMS = {
    "constraint_drift": ("constraint_drift_terms", "J̇v's velocity products, T_s = λ·(Σ|v|)²"),
    "constrained_vdot": ("kkt_terms", "the KKT solve's terms, T_s = ‖K⁻¹‖(‖K‖‖x‖ + ‖r‖) + "
                                      "‖M⁻¹‖(‖f‖ + ‖Jᵀλ‖)"),
    "constraint_multipliers": ("kkt_terms", "the KKT solve's terms, T_s = ‖K⁻¹‖(‖K‖‖x‖ + "
                                            "‖r‖) + ‖M⁻¹‖(‖f‖ + ‖Jᵀλ‖)"),
    "native_vdot": ("kkt_terms", "the KKT solve's terms, T_s = ‖K⁻¹‖(‖K‖‖x‖ + ‖r‖) + "
                                 "‖M⁻¹‖(‖f‖ + ‖Jᵀλ‖)"),
    "native_lambda": ("kkt_terms", "the KKT solve's terms, T_s = ‖K⁻¹‖(‖K‖‖x‖ + ‖r‖) + "
                                   "‖M⁻¹‖(‖f‖ + ‖Jᵀλ‖)"),
}


def drift_key(fx: str) -> str:
    """The (S,) T array of J̇v at the stage's states of fixture ``fx``."""
    return f"terms/{fx}/{NAME}/constraint_drift"


def model_key(fx: str) -> str:
    """[m [kg], |g| [m/s²], λ [m]] of fixture ``fx`` (dynamics.model_terms)."""
    return f"terms/{fx}/{NAME}/model"


def kkt_key(fx: str, engine: str, part: str = "kkt") -> str:
    """An engine's KKT terms array: part "kkt" (S,) T, "M" (S, nv, nv), "f" (S, nv)."""
    return f"terms/{fx}/{NAME}/{part}/{engine}"


def store(arrays: dict[str, NDArray[Any]], fx: str, consts: ArrayLike,
          V: ArrayLike) -> None:
    """Fill the drift terms of fixture ``fx``: consts [m, |g|, λ], V (S, nv) the states."""
    arrays[model_key(fx)] = np.asarray(consts, dtype=float)
    arrays[drift_key(fx)] = C.drift_terms(float(np.asarray(consts)[2]), V)


def store_engine(arrays: dict[str, NDArray[Any]], fx: str, engine: str,
                 t: dict[str, Any]) -> None:
    """Fill one engine's KKT terms (t: stage.engine_terms' answer)."""
    arrays[kkt_key(fx, engine, "M")] = np.asarray(t["M"], dtype=float)
    arrays[kkt_key(fx, engine, "f")] = np.asarray(t["f"], dtype=float)
    arrays[kkt_key(fx, engine)] = C.kkt_terms(t["M"], t["f"], t["J"], t["drift"], t["keep"],
                                              t["vdot"], t["lam"])


def _fixture_of(key: str) -> str:
    return key.split("/", 1)[1].rsplit(f"/{NAME}/", 1)[0]


def terms_of(quantity: str, key_a: str, key_b: str,
             arrays: dict[str, NDArray[Any]]) -> NDArray[np.float64] | None:
    """(S,) T of the row comparing the arrays key_a, key_b ("out/<fx>/constrained/<q>/
    <engine>[:<solver>]"), or None where the quantity has no terms or they are not stored:
    J̇v's terms, or the larger KKT terms of the engines behind the two arrays."""
    if quantity.split("/", 1)[0] not in TERMS:
        return None
    fx = _fixture_of(key_a)
    if quantity.startswith("constraint_drift"):
        got = arrays.get(drift_key(fx))
        return None if got is None else np.asarray(got, dtype=float)
    engines = {k.rsplit("/", 1)[1].split(":", 1)[0] for k in (key_a, key_b)}
    keys = [kkt_key(fx, e) for e in sorted(engines)]
    if not all(k in arrays for k in keys):
        return None
    out: NDArray[np.float64] = np.max([np.asarray(arrays[k], dtype=float) for k in keys],
                                      axis=0)
    return out


def terms_compare(rid: str, fixture: str, quantity: str, engine_a: str, engine_b: str,
                  a: ArrayLike, b: ArrayLike, tol: Tolerance, key_a: str, key_b: str,
                  labels: Sequence[str] | NDArray[Any] | None, key_labels: str,
                  terms: ArrayLike) -> Record:
    """``compare`` with the per-state floor max(atol, f·T_s) (module docstring); T (S,).
    Where the floor decided a passed row (some state beyond atol + rtol·scale), the reason
    states the bound."""
    base, sep, cls = quantity.partition("/")  # cls: the tolerance class ("float32")
    entry, what = TERMS[base]
    f = lookup(NAME, entry + sep + cls).atol
    T = np.asarray(terms, dtype=float)
    S = T.shape[0]
    floor = terms_floor(rid, a, T, tol.atol, f)
    rec = compare(rid, NAME, fixture, quantity, engine_a, engine_b, a, b, tol, key_a,
                  key_b, labels, key_labels, floor=floor)
    A, B = np.asarray(a, dtype=float).reshape(S, -1), np.asarray(b, dtype=float).reshape(S, -1)
    err = np.abs(A - B).max(axis=1, initial=0.0)
    scale = np.maximum(np.abs(A).max(axis=1, initial=0.0), np.abs(B).max(axis=1, initial=0.0))
    raised = err > tol.atol + tol.rtol * scale
    if rec.status == "passed" and raised.any():
        k = int(np.argmax(np.where(raised, err, -1.0)))
        rec.reason = (f"within round-off of its own terms on {int(raised.sum())} of {S} "
                      f"states (terms that cancel there): |Δ| ≤ {f:.3g} × T_s + rtol × "
                      f"scale, T_s up to {T[raised].max():.3g} ({what}); largest |Δ| "
                      f"{err[k]:.3g} against {floor[k] + tol.rtol * scale[k]:.3g}")
    return rec


def _check_terms(r: Record, arrays: dict[str, NDArray[Any]]) -> None:
    """Raise ValueError where a stored T array differs from its stored inputs."""
    fx = _fixture_of(r.key_a)
    if r.quantity.startswith("constraint_drift"):
        memoized("constrained:" + drift_key(fx), lambda: _check_drift(arrays, fx))
        return
    for e in sorted({k.rsplit("/", 1)[1].split(":", 1)[0] for k in (r.key_a, r.key_b)}):
        memoized("constrained:" + kkt_key(fx, e), lambda e=e: _check_kkt(arrays, fx, e))


def _check_drift(arrays: dict[str, NDArray[Any]], fx: str) -> None:
    """Raise ValueError where the stored drift terms of ``fx`` differ from its states."""
    again = C.drift_terms(float(np.asarray(arrays[model_key(fx)])[2]),
                          arrays[f"in/{fx}/{NAME}/v"])
    if not np.array_equal(again, np.asarray(arrays[drift_key(fx)], dtype=float)):
        raise ValueError(f"{drift_key(fx)} differs from the terms of the stored states")


def _check_kkt(arrays: dict[str, NDArray[Any]], fx: str, e: str) -> None:
    """Raise ValueError where engine ``e``'s stored KKT terms of ``fx`` differ from those of
    its stored arrays."""
    pre = f"out/{fx}/{NAME}"
    again = C.kkt_terms(arrays[kkt_key(fx, e, "M")], arrays[kkt_key(fx, e, "f")],
                        arrays[f"{pre}/constraint_jacobian/{e}"],
                        arrays[f"{pre}/constraint_drift/{e}"],
                        arrays[f"{pre}/independent_rows/{e}"],
                        arrays[f"{pre}/constrained_vdot/{e}"],
                        arrays[f"{pre}/constraint_multipliers/{e}"])
    stored = np.asarray(arrays[kkt_key(fx, e)], dtype=float)
    margin = lookup("verify", "derived_bound_inputs").rtol
    if again.shape != stored.shape or not np.all(np.abs(again - stored)
                                                  <= margin * np.abs(stored)):
        raise ValueError(f"{kkt_key(fx, e)} differs from the KKT terms of the stored "
                         "arrays")


def recompute(r: Record, arrays: dict[str, NDArray[Any]],
              records_by_id: dict[str, Record]) -> Record:
    """A stage-3 row computed again from the stored arrays: with its terms (checked against
    their stored inputs; KeyError / ValueError otherwise) ``terms_compare``, else
    ``compare``. A reason the stage wrote (a native solver's law) is kept where the
    recomputed one is empty, a failure's, or contained in it. Within a ``recompute_pass``
    each stored terms array is checked once for all its rows (``memoized``)."""
    a, b = arrays[r.key_a], arrays[r.key_b]
    labels = arrays[r.key_labels] if r.key_labels else None
    tol = Tolerance(r.atol if r.atol is not None else 0.0,
                    r.rtol if r.rtol is not None else 0.0, "")
    T = terms_of(r.quantity, r.key_a, r.key_b, arrays)
    if T is not None:
        _check_terms(r, arrays)
        again = terms_compare(r.id, r.fixture, r.quantity, r.engine_a, r.engine_b, a, b, tol,
                              r.key_a, r.key_b, labels, r.key_labels, T)
    else:
        again = compare(r.id, r.stage, r.fixture, r.quantity, r.engine_a, r.engine_b, a, b,
                        tol, r.key_a, r.key_b, labels, r.key_labels)
    if not again.reason or again.status == "failed" or again.reason in r.reason:
        again.reason = r.reason
    return again
