"""Stage 2, unconstrained dynamics under identical inputs (N seeded states).

* mass_matrix (N, nv, nv); bias_forces (N, nv) h(q, v) without damping;
* forward_dynamics (N, nv) v̇ for the sampled τ; inverse_dynamics (N, nv) τ for the
  sampled v̇ (both with the canonical damping −D v).

Conditioning. v̇ = M⁻¹(τ − h) is a solve: two exact engines that agree on M and h to
round-off still differ in v̇ by up to ~cond(M)·eps relative. The runner records cond(M)
per sampled state (``cond/<fixture>/mass_matrix``, (N,): the largest 2-norm condition
number of the engines' M there) and scores forward_dynamics per state against
    atol + max(rtol, min(f · cond(M_s), cap)) · scale_s
(f, cap: the table's ``dynamics/conditioned_forward_dynamics``; atol, rtol: the row's
own). The row's reason states cond(M) and the bound wherever the conditioning raised it,
and ``recompute`` (the stage's ``verify`` hook, also the diagnosis's) recomputes it from
the stored arrays.

Round-off of cancelling terms. h(q, v) is a sum of terms that can cancel exactly: with
every joint axis parallel to gravity, or every com on its axis, h = 0 while each engine
sums gravity moments and velocity products of size T_s to round-off ~eps·T_s. A relative
bound of max|h| cannot accept that, so bias_forces is scored per state against
    max(atol, f · T_s) + rtol · scale_s,   T_s = m · λ · (|g| + λ · (Σ|v_s|)²)
(m the moving mass [kg], λ = max(L, 1 m) with L the sum of the joints' placements and the
largest com offset [m]: no lever arm of the tree is longer at any q; f: the table's
``dynamics/bias_forces_terms``). T_s is stored beside the outputs (``terms/<fixture>/
bias_forces``, with [m, |g|, λ] in ``terms/<fixture>/model``) and ``recompute`` checks it
against the stored v.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.records import Record, compare, memoized, terms_floor, unit_of
from harness.core.tolerances import Tolerance, lookup
from harness.model.protocol import HasBatchedEvaluation
from harness.stages.base import Quantity, state_labels

NAME = "dynamics"
# quantity -> the matrix quantity (same stage, same states) whose conditioning it carries
CONDITIONED = {"forward_dynamics": "mass_matrix"}


def _each(fn, batch):
    """(adapter, inputs) → (N, …): one batch call for an engine that evaluates worlds in
    batches (HasBatchedEvaluation), else one call per state."""
    def compute(a, i):
        if isinstance(a, HasBatchedEvaluation):
            return batch(a, i)
        return np.stack([fn(a, k, i) for k in range(i.q.shape[0])])
    return compute


QUANTITIES = (
    Quantity("mass_matrix", _each(lambda a, k, i: a.mass_matrix(i.q[k]),
                                  lambda a, i: a.batch_mass_matrix(i.q)),
             state_labels, None, "mass_matrix"),
    Quantity("bias_forces", _each(lambda a, k, i: a.bias_forces(i.q[k], i.v[k]),
                                  lambda a, i: a.batch_bias_forces(i.q, i.v)),
             state_labels, None, "bias_forces"),
    Quantity("forward_dynamics",
             _each(lambda a, k, i: a.forward_dynamics(i.q[k], i.v[k], i.tau[k]),
                   lambda a, i: a.batch_forward_dynamics(i.q, i.v, i.tau)),
             state_labels, None, "forward_dynamics"),
    Quantity("inverse_dynamics",
             _each(lambda a, k, i: a.inverse_dynamics(i.q[k], i.v[k], i.vdot[k]),
                   lambda a, i: a.batch_inverse_dynamics(i.q, i.v, i.vdot)),
             state_labels, None, "inverse_dynamics"),
)


# ----- round-off of cancelling terms (bias forces) -------------------------------------------
# quantity -> table entry of its terms-derived floor
TERMS = {"bias_forces": "bias_forces_terms"}


def model_terms(model: Any) -> NDArray[np.float64]:
    """[m [kg], |g| [m/s²], λ [m]] of a PreparedModel: the moving mass, gravity, and
    max(L, 1 m) with L the sum of the joints' placement lengths and the largest com offset,
    an upper bound of every lever arm of the tree at any configuration."""
    spec = model.spec
    L = (sum(float(np.linalg.norm(j.xyz)) for j in spec.joints)
         + max((float(np.linalg.norm(b.com)) for b in spec.bodies), default=0.0))
    return np.array([model.declared_total_mass(), float(np.linalg.norm(spec.gravity)),
                     max(L, 1.0)])


def terms_magnitude(consts: ArrayLike, v: ArrayLike) -> NDArray[np.float64]:
    """(N,) T_s = m·λ·(|g| + λ·(Σ|v_s|)²) [N·m] of h's terms at the N states v (N, nv)."""
    m, g, lam = np.asarray(consts, dtype=float)
    w = np.abs(np.asarray(v, dtype=float)).sum(axis=1)
    out: NDArray[np.float64] = m * lam * (g + lam * w * w)
    return out


def terms_compare(rid: str, stage: str, fixture: str, quantity: str, engine_a: str,
                  engine_b: str, a: ArrayLike, b: ArrayLike, tol: Tolerance, key_a: str,
                  key_b: str, labels: Sequence[str] | NDArray[Any] | None, key_labels: str,
                  terms: ArrayLike) -> Record:
    """``compare`` with the per-state floor max(atol, f·T_s) (module docstring): T (S,) the
    magnitude of the quantity's terms, f the table's ``dynamics/<quantity>_terms``."""
    base, _, cls = quantity.partition("/")  # cls: the tolerance class ("float32")
    f = lookup(NAME, TERMS[base] + (f"/{cls}" if cls else "")).atol
    T = np.asarray(terms, dtype=float)
    floor = terms_floor(rid, a, T, tol.atol, f)
    rec = compare(rid, stage, fixture, quantity, engine_a, engine_b, a, b, tol, key_a,
                  key_b, labels, key_labels, floor=floor)
    if rec.status == "passed" and rec.max_abs is not None and rec.max_rel is None:
        rec.reason = (f"against 0 within round-off of h's terms: |Δ| ≤ {f:.3g} × T_s, T_s "
                      f"up to {T.max():.3g} N·m (m·λ·(|g| + λ·(Σ|v|)²))")
    return rec


def terms_key(out_key: str, quantity: str) -> str:
    """The T array of the states behind ``out_key`` ("out/<fx>/<q>/<e>" → "terms/<fx>/<q>")."""
    head = out_key.rsplit(f"/{quantity}/", 1)[0]
    return "terms/" + head.split("/", 1)[1] + "/" + quantity


# ----- conditioning-aware scoring of v̇ ------------------------------------------------------
def cond_key(out_key: str, quantity: str) -> str:
    """The cond(M) array of the states behind the output array ``out_key``
    ("out/<fixture>[/…]/<quantity>/<engine>" → "cond/<fixture>[/…]/<matrix quantity>")."""
    head = out_key.rsplit(f"/{quantity}/", 1)[0]
    return "cond/" + head.split("/", 1)[1] + "/" + CONDITIONED[quantity]


def condition_numbers(matrices: Iterable[ArrayLike]) -> NDArray[np.float64] | None:
    """(N,) per state, the largest 2-norm condition number σ_max/σ_min over the engines'
    (N, n, n) matrices (inf where one is singular); None without matrices."""
    out = None
    for M in matrices:
        M = np.asarray(M, dtype=float)
        # the whole stack at once (numpy's cond and svd take (N, n, n) and treat each
        # matrix on its own, as one call per matrix did); a matrix with a non-finite entry
        # or none at all: inf
        c = np.full(M.shape[0], np.inf)
        ok = (np.all(np.isfinite(M), axis=tuple(range(1, M.ndim))) if M.size
              else np.zeros(M.shape[0], dtype=bool))
        if ok.any():
            with np.errstate(divide="ignore", invalid="ignore"):
                c[ok] = np.linalg.cond(M[ok])
        c = np.where(np.isnan(c), np.inf, c)
        out = c if out is None else np.maximum(out, c)
    return out


def backward_error(vdot: ArrayLike, M: ArrayLike, h: ArrayLike, tau: ArrayLike,
                   v: ArrayLike, D: ArrayLike) -> NDArray[np.float64]:
    """(S,) per state the backward error of v̇ (S, n) as a solution of M v̇ = τ − h − D v
    (M (S, n, n), h (S, n) with springs, τ, v (S, n), D (n,) the joint damping):
    max|M v̇ − r| / (max|M| · max|v̇| + max|r|), r = τ − h − D v [–]."""
    vd, M = np.asarray(vdot, dtype=float), np.asarray(M, dtype=float)
    r = (np.asarray(tau, dtype=float) - np.asarray(h, dtype=float)
         - np.asarray(D, dtype=float) * np.asarray(v, dtype=float))
    res = np.abs(np.einsum("sij,sj->si", M, vd) - r).max(axis=1)
    den = np.abs(M).max(axis=(1, 2)) * np.abs(vd).max(axis=1) + np.abs(r).max(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: NDArray[np.float64] = np.where(den > 0, res / np.where(den > 0, den, 1.0),
                                            np.where(res > 0, np.inf, 0.0))
    return out


def conditioned_compare(rid: str, stage: str, fixture: str, quantity: str, engine_a: str,
                        engine_b: str, a: ArrayLike, b: ArrayLike, tol: Tolerance, key_a: str,
                        key_b: str, labels: Sequence[str] | NDArray[Any] | None,
                        key_labels: str, cond: ArrayLike,
                        backward: NDArray[np.float64] | None = None) -> Record:
    """a, b (S, ...) v̇ samples [rad/s² | m/s²]; cond (S,) cond(M) of each state [–].
    ``compare`` with the per-state bound atol + max(rtol, min(f·cond_s, cap))·scale_s
    (module docstring); max_abs and max_rel are compare's. On a state where f·cond(M)
    reaches the cap, v̇ keeps too few digits for two engines' v̇ to be compared forward;
    with ``backward`` (S,) — the largest backward error of either engine's v̇ against
    either engine's M and h there (``backward_error``) — such a state passes when that is
    ≤ the row's rtol: each engine solved the shared equations to the parity claim. The
    reason states the bound wherever cond(M) raised it, the backward errors where they
    judged, and the failure, if any."""
    rec = compare(rid, stage, fixture, quantity, engine_a, engine_b, a, b, tol, key_a,
                  key_b, labels, key_labels)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    cond = np.asarray(cond, dtype=float)
    S = a.shape[0]
    if cond.shape != (S,):
        raise ValueError(f"{rid}: cond(M) has shape {cond.shape}, expected ({S},)")
    if not np.all(np.isfinite(a)) or not np.all(np.isfinite(b)):
        return rec  # non-finite: compare's verdict and reason stand
    cfg = lookup(NAME, "conditioned_" + quantity)  # "forward_dynamics[/float32]"
    err = np.abs(a - b).reshape(S, -1).max(axis=1)
    scale = np.maximum(np.abs(a).reshape(S, -1).max(axis=1),
                       np.abs(b).reshape(S, -1).max(axis=1))
    rt = np.maximum(tol.rtol, np.minimum(cfg.rtol * cond, cfg.atol))
    bound = tol.atol + rt * scale
    ok = err <= bound
    at_cap = cfg.rtol * cond >= cfg.atol
    by_backward = np.zeros(S, dtype=bool)
    if backward is not None:
        bw = np.asarray(backward, dtype=float)
        by_backward = at_cap & ~ok & (bw <= tol.rtol)
        ok = ok | by_backward
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(bound > 0, err / np.where(bound > 0, bound, 1.0),
                         np.where(err > 0, np.inf, 0.0))
    ratio = np.where(by_backward, 0.0, ratio)
    w = int(np.argmax(ratio))
    label = (lambda k: str(labels[k]) if labels is not None else f"sample {k}")  # noqa: E731
    passed = bool(np.all(ok))
    rec.passed, rec.status = passed, "passed" if passed else "failed"
    rec.worst_sample, rec.worst_label = w, label(w)
    parts = []
    unit = unit_of(stage, quantity)
    if not passed:
        parts.append(f"|Δ| {err[w]:.3g}{' ' + unit if unit else ''} at {label(w)} exceeds "
                     f"its bound {bound[w]:.3g} (relative {rt[w]:.3g} at cond(M) "
                     f"{cond[w]:.3g})"
                     + (f"; backward error there {float(np.asarray(backward)[w]):.3g} > rtol "
                        f"{tol.rtol:g}" if backward is not None and at_cap[w] else ""))
    if np.any(by_backward):
        bw = np.asarray(backward, dtype=float)
        k = int(np.argmax(np.where(by_backward, bw, -1.0)))
        parts.append(
            f"judged by backward error on {int(by_backward.sum())} of {S} states, where "
            f"cond(M) (up to {cond[by_backward].max():.3g}) leaves v̇ too few digits to "
            f"compare forward (|Δ| up to {err[by_backward].max():.3g}"
            f"{' ' + unit if unit else ''}): "
            f"each engine's v̇ solves both engines' M v̇ = τ − h − D v to a backward error "
            f"max|M v̇ − r| / (max|M| max|v̇| + max|r|) ≤ {bw[k]:.3g} ({label(k)}), within "
            f"rtol {tol.rtol:g}")
    raised = rt > tol.rtol
    if np.any(raised):
        k = int(np.argmax(cond))
        capped = int(np.sum(cfg.rtol * cond >= cfg.atol))
        parts.append(
            f"v̇ carries cond(M)·eps: bound per state atol + max(rtol {tol.rtol:g}, "
            f"min({cfg.rtol:.3g} × cond(M), {cfg.atol:g})) × max|v̇|; cond(M) up to "
            f"{cond[k]:.3g} ({label(k)}), relative bound there {rt[k]:.3g}; raised on "
            f"{int(raised.sum())} of {S} states"
            + (f", capped on {capped} (v̇ keeps fewer than {-np.log10(cfg.atol):.0f} "
               "significant digits there)" if capped else ""))
    rec.reason = "; ".join(parts)
    return rec


def backward_key(ck: str) -> str:
    """The joint damping D (nv,) stored beside cond(M) ("cond/<fx>/mass_matrix" →
    "cond/<fx>/damping"): with it, the stored M, h, τ and v give v̇'s backward error."""
    return ck.rsplit("/", 1)[0] + "/damping"


def pair_backward(arrays: dict[str, Any], key_a: str, key_b: str, quantity: str
                  ) -> NDArray[np.float64] | None:
    """(S,) the largest backward error of the v̇ arrays key_a, key_b against the M and h
    of both engines, from the stored arrays ("out/<fx>/{mass_matrix,bias_forces}/<e>",
    "in/<fx>/{tau,v}", "cond/<fx>/damping"); None where one of them is not stored (an
    engine with no h, the diagnosis's states). Each (v̇, engine) backward error is
    computed once per ``recompute_pass`` (``memoized``)."""
    fx_path = key_a.rsplit(f"/{quantity}/", 1)[0].split("/", 1)[1]
    keys = [key_a, key_b]
    eng = [k.rsplit("/", 1)[1] for k in keys]
    need = ([f"out/{fx_path}/mass_matrix/{e}" for e in eng]
            + [f"out/{fx_path}/bias_forces/{e}" for e in eng]
            + [f"in/{fx_path}/tau", f"in/{fx_path}/v", f"cond/{fx_path}/damping"])
    if not all(k in arrays for k in need):
        return None
    tau, v, D = (arrays[f"in/{fx_path}/tau"], arrays[f"in/{fx_path}/v"],
                 arrays[f"cond/{fx_path}/damping"])
    out = None
    for k in keys:
        for e in eng:
            be = memoized(f"dynamics:backward:{k}:{e}", lambda k=k, e=e: backward_error(
                arrays[k], arrays[f"out/{fx_path}/mass_matrix/{e}"],
                arrays[f"out/{fx_path}/bias_forces/{e}"], tau, v, D))
            out = be if out is None else np.maximum(out, be)
    return out


def compared_plainly(r: Record, arrays: dict[str, NDArray[Any]]) -> bool:
    """Whether ``recompute`` computes the row ``r`` as ``compare`` of its two arrays alone:
    its quantity has no terms array and no cond(M) array stored (the branches of
    ``recompute``, in its order)."""
    base = r.quantity.split("/", 1)[0]
    if base in TERMS and terms_key(r.key_a, base) in arrays:
        return False
    return base not in CONDITIONED or cond_key(r.key_a, base) not in arrays


def recompute(r: Record, arrays: dict[str, NDArray[Any]],
              records_by_id: dict[str, Record]) -> Record:
    """A stage-2 (or diagnosis) row computed again from the stored arrays: ``compare``, or
    for a conditioned quantity with its cond(M) array ``conditioned_compare`` — after
    checking that array against the condition numbers of the stored matrices (KeyError /
    ValueError when an array is missing or does not match). Within a ``recompute_pass``
    the checks of a fixture's terms and cond(M) arrays and each engine's backward errors
    are made once for all its rows (``memoized``)."""
    a, b = arrays[r.key_a], arrays[r.key_b]
    labels = arrays[r.key_labels] if r.key_labels else None
    tol = Tolerance(r.atol, r.rtol, "")
    args = (r.id, r.stage, r.fixture, r.quantity, r.engine_a, r.engine_b, a, b, tol,
            r.key_a, r.key_b, labels, r.key_labels)
    base = r.quantity.split("/", 1)[0]
    if base in TERMS and terms_key(r.key_a, base) in arrays:
        tk = terms_key(r.key_a, base)
        memoized("dynamics:" + tk, lambda: _check_terms(arrays, tk))
        return terms_compare(*args, arrays[tk])
    if base not in CONDITIONED or cond_key(r.key_a, base) not in arrays:
        return compare(*args)
    ck = cond_key(r.key_a, base)
    stored = memoized("dynamics:" + ck, lambda: _checked_cond(arrays, ck, base))
    return conditioned_compare(*args, stored,
                               pair_backward(arrays, r.key_a, r.key_b, base))


def _check_terms(arrays: dict[str, NDArray[Any]], tk: str) -> None:
    """Raise ValueError where the stored T array ``tk`` differs from its stored states."""
    fx = tk.split("/", 2)[1]
    again_t = terms_magnitude(arrays[f"terms/{fx}/model"], arrays[f"in/{fx}/v"])
    if not np.array_equal(again_t, np.asarray(arrays[tk], dtype=float)):
        raise ValueError(f"{tk} differs from the terms of the stored states")


def _checked_cond(arrays: dict[str, NDArray[Any]], ck: str, base: str) -> NDArray[np.float64]:
    """(S,) the stored cond(M) array ``ck`` [–], checked against the condition numbers of
    the stored matrices (ValueError where they differ)."""
    prefix = "out/" + ck.split("/", 1)[1] + "/"
    depth = prefix.count("/")
    again = condition_numbers([arrays[k] for k in sorted(k for k in arrays
                                                         if k.startswith(prefix))
                               if k.count("/") == depth])
    stored = np.asarray(arrays[ck], dtype=float)
    if again is None or again.shape != stored.shape or not np.all(
            (again == stored) | (np.abs(again - stored)
                                 <= lookup("verify", "derived_bound_inputs").rtol
                                 * np.abs(stored))):
        raise ValueError(f"{ck} differs from the condition numbers of the stored "
                         f"{CONDITIONED[base]} arrays")
    return stored
