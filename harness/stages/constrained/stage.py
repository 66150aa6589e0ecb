"""Stage 3, constrained dynamics of holonomic loops and joint couplings (fixtures with
``spec.constraints`` or ``spec.couplings``).

Dimension legend: N states, nq, nv canonical, m constraint rows (constraints.py: the loop
rows, then one row per joint coupling).

States: q on the constraint manifold (Gauss–Newton from the fixture's q_init, or the
neutral configuration when the only rows are couplings, ⊕ a seeded
N(0, 0.3²) perturbation, halved up to 8 times when Gauss-Newton cannot close the loops
from there, sample 0 unperturbed), v = a seeded random combination of an
orthonormal basis of ker J, projected onto ker J_K of the kept rows, τ ~ N(0, 1);
all computed with the *reference engine* (the first engine, in the run's order, whose
frame poses and constraint terms work), named in the records' reasons.

Per engine, from that engine's own APIs: J (N, m, nv) and J̇v (N, m) (frame_jacobian_drift;
a coupling's row is the spec's constant e_f − m·e_l, J̇v = 0),
M (mass_matrix), f = τ − h − D v (bias_forces; an engine with no h of its own
gives f = M · forward_dynamics(τ), its own free dynamics), the kept rows (redundancy,
constraints.py independent_rows), and the KKT answer (v̇ (N, nv), λ (N, m), 0 on
dropped rows). Records:

* engine pairs (passed/failed, gated like stages 0-2): constraint_jacobian,
  constraint_drift, independent_rows, constrained_vdot, constraint_multipliers;
* declared~engine (against 0): constraint_residual ‖g‖∞ (every row), constraint_velocity
  ‖Jv‖∞, constraint_acceleration ‖Jv̇ + J̇v‖∞ (the kept and the exactly dependent rows),
  each (N, 1); where a nearly dependent row was released, released_acceleration: its
  |Jv̇ + J̇v| as a fraction of what its release accounts for (constraints.py residuals);
* dependent_rows (informational note per engine) naming the rows dropped, each exactly or
  nearly (not exactly) dependent, by how much;
* native solvers (``adapter.native_constrained``), each against the same engine's KKT
  answer: exact solvers → native_vdot / native_lambda, passed/failed; soft or
  velocity-level solvers → native_vdot informational (their law and parameters in the
  reason; the error is shown, never scored);
* constrained rollouts (harness/stages/constrained/rollout.py) with the reference engine:
  rollout_drift_{none,baumgarte} informational, rollout_projection passed/failed.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.core.conventions import Layout
from harness.core.errors import NotProvided
from harness.core.records import Record, compare, inform
from harness.core.spec import COUPLING_NOTE, FROZEN_NOTE, FixtureSpec
from harness.core.tolerances import lookup, precision_class
from harness.model.prepared import PreparedModel
from harness.model.protocol import EngineAdapter, HasConstrainedDynamics
from harness.stages import dynamics
from harness.stages.constrained import constraints as C
from harness.stages.constrained import rollout as constrained_rollout
from harness.stages.constrained import roundoff
from harness.stages.constrained.constraints import NAME, damping_vector  # noqa: F401

PERTURBATION = 0.3  # [rad | m] std of the perturbation of q_init before Gauss-Newton
SHRINK_TRIES = 8  # a perturbation Gauss-Newton cannot close is halved up to this often
PAIR_QUANTITIES = ("constraint_jacobian", "constraint_drift", "independent_rows",
                   "constrained_vdot", "constraint_multipliers")
ZERO_QUANTITIES = ("constraint_residual", "constraint_velocity", "constraint_acceleration")


def reference_engine(spec: FixtureSpec, adapters: dict[str, EngineAdapter],
                     engines: Sequence[str]) -> tuple[str, EngineAdapter]:
    """(name, adapter) of the first engine whose frame poses and constraint terms work."""
    why = []
    for e in engines:
        a = adapters.get(e)
        if a is None:
            continue
        try:
            q0 = start_q(spec, a)
            C.full_residual(spec, a, q0)
            C.jacobian_drift(spec, a, q0, np.zeros(a.nv))
            return e, a
        except NotProvided as err:
            why.append(f"{e}: {err.why}")
        except Exception as err:  # noqa: BLE001 - tried in turn, all reasons reported
            why.append(f"{e}: {type(err).__name__}: {err}")
    raise RuntimeError("no engine can sample the constraint manifold (" + "; ".join(why) + ")")


def start_q(spec: FixtureSpec, adapter: EngineAdapter) -> NDArray[np.float64]:
    """q (nq,) the manifold is sampled from: the spec's q_init, else (a model whose only
    rows are joint couplings) the neutral configuration."""
    if spec.q_init:
        return np.asarray(spec.q_init, dtype=float)
    return Layout.from_spec(spec).neutral()


def sample_states(spec: FixtureSpec, ref: EngineAdapter, n: int,
                  rng: np.random.Generator
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(Q (n, nq), V (n, nv), TAU (n, nv)) on the manifold, with ``ref``'s own kinematics."""
    q0 = start_q(spec, ref)
    Q, V, TAU = [], [], []
    for i in range(n):
        dq = rng.normal(scale=PERTURBATION, size=ref.nv) if i else np.zeros(ref.nv)
        for halve in range(SHRINK_TRIES + 1):  # a loop that Gauss-Newton cannot close from
            try:  # that far (a nearly locked linkage): the same direction, half as far
                q = C.solve_manifold(spec, ref, ref.integrate(q0, dq / 2.0 ** halve, 1.0))
                break
            except ValueError:
                if halve == SHRINK_TRIES:
                    raise
        J, _ = C.jacobian_drift(spec, ref, q, np.zeros(ref.nv))
        B = C.null_space(J)
        v = B @ rng.normal(size=B.shape[1])
        # in ker J_K of the rows the stage keeps: the thresholded ker J also holds the
        # direction of a nearly (not exactly) dependent row, which the kept rows see
        JK = J[C.independent_rows(J)]
        v = v - np.linalg.lstsq(JK, JK @ v, rcond=None)[0]
        Q.append(q)
        V.append(v)
        TAU.append(rng.normal(size=ref.nv))
    return np.array(Q), np.array(V), np.array(TAU)


def engine_terms(spec: FixtureSpec, layout: Layout, adapter: EngineAdapter, Q: NDArray[np.float64],
                 V: NDArray[np.float64], TAU: NDArray[np.float64],
                 integrate: Callable[..., NDArray[np.float64]] | None = None
                 ) -> dict[str, Any]:
    """Q (N, nq), V (N, nv), TAU (N, nv) [N·m | N]: the sampled states and torques.
    Everything stage 3 needs from one engine (its own APIs only); raises NotProvided /
    other errors for the caller to record. Keys: J, drift, keep, vdot, lam, f, M, and
    g (or None with ``g_why``), plus ``f_api`` saying how f was obtained. ``integrate``:
    q ⊕ t v for the release rate (constraints.py ``release_rate``), default the adapter's."""
    D = damping_vector(layout)
    N = Q.shape[0]
    h = lookup(NAME, "release_step").atol
    out = {k: [] for k in ("J", "drift", "keep", "vdot", "lam", "f", "M", "g", "c", "d",
                           "rate", "rate2", "nearly")}
    g_why, f_api = "", "τ − h − D v (bias_forces)"
    for k in range(N):
        q, v, tau = Q[k], V[k], TAU[k]
        J, drift = C.jacobian_drift(spec, adapter, q, v)
        M = adapter.mass_matrix(q)
        try:
            f = tau - adapter.bias_forces(q, v) - D * v
        except NotProvided:
            f = M @ adapter.forward_dynamics(q, v, tau)
            f_api = "M · forward_dynamics(τ) (the engine has no h of its own)"
        keep = C.independent_rows(J)
        vdot, lam = C.kkt_solve(M, f, J, drift, keep)
        c, d = C.release(J, keep)
        nearly = C.nearly_dependent(J, keep)
        rate, rate2 = (C.release_rate(spec, adapter, q, v, c, keep, h, integrate)
                       if not keep.all()
                       else (np.zeros(len(keep)), np.zeros(len(keep))))
        if not g_why:
            try:
                out["g"].append(C.full_residual(spec, adapter, q))
            except NotProvided as err:
                g_why = err.why
        for key, val in (("J", J), ("drift", drift), ("keep", keep), ("vdot", vdot),
                         ("lam", lam), ("f", f), ("M", M), ("c", c), ("d", d),
                         ("rate", rate), ("rate2", rate2), ("nearly", nearly)):
            out[key].append(val)
    res = {k: np.array(v) for k, v in out.items() if k != "g"}
    res["g"] = None if g_why else np.array(out["g"])
    res["g_why"], res["f_api"] = g_why, f_api
    return res


# the zero rows whose value carries an engine's float32 round-off (poses, J against the
# reference engine's v); constraint_acceleration and released_acceleration are residuals
# of the harness's own double-precision KKT solve of that engine's terms: double class
F32_ZERO = ("constraint_residual", "constraint_velocity")


def _cls(adapters: dict[str, EngineAdapter], *engines: str) -> str:
    """The tolerance class of a row of these engines (harness/core/tolerances.py
    ``precision_class``)."""
    return precision_class(*(adapters.get(e) for e in engines))


def run_stage(model: PreparedModel, adapters: dict[str, EngineAdapter], engines: list[str],
              samples: int, rng: np.random.Generator, arrays: dict[str, NDArray[Any]],
              blocked_pair: dict[tuple[str, str], str], blocked_engine: dict[str, str],
              progress: Callable[[str], None] | None = None) -> list[Record]:
    """Stage-3 records for one model (empty if it has no constraints); fills ``arrays``."""
    spec, fx = model.spec, model.name
    if not C.has_rows(spec):
        return []
    records = []
    pre = f"out/{fx}/{NAME}"
    labels = np.array([f"state {i}" for i in range(samples)])
    lkey = f"labels/{fx}/{NAME}/state"
    arrays[lkey] = labels
    arrays[f"labels/{fx}/{NAME}/rows"] = np.array(C.row_labels(spec))
    live = [e for e in engines if e in adapters and e not in blocked_engine]
    try:  # the states are sampled with a double-precision engine where one works
        ref_name, ref = reference_engine(spec, adapters, sorted(live, key=lambda e: bool(
            _cls(adapters, e))))
        Q, V, TAU = sample_states(spec, ref, samples, rng)
    except (RuntimeError, ValueError) as err:
        return [Record(id=f"{fx}/{NAME}/states", stage=NAME, fixture=fx, quantity="states",
                       engine_a="", engine_b="", status="error",
                       reason=f"cannot sample the constraint manifold: {err}")]
    for k, a in (("q", Q), ("v", V), ("tau", TAU)):
        arrays[f"in/{fx}/{NAME}/{k}"] = a
    roundoff.store(arrays, fx, dynamics.model_terms(model), V)
    terms = {}
    for e in live:
        if progress:
            progress(f"{fx}: stage {NAME}: {e}")
        try:
            terms[e] = engine_terms(spec, model.layout, adapters[e], Q, V, TAU,
                                    _integrate_of(adapters[e], ref, Q[0]))
        except NotProvided as err:
            records.append(_single(fx, "constrained_vdot", e, "not_provided", err.why))
            continue
        except Exception as err:  # noqa: BLE001 - an engine raised: recorded, never hidden
            records.append(_single(fx, "constrained_vdot", e, "error",
                                   f"{type(err).__name__}: {err}"))
            continue
        t = terms[e]
        for qty, arr in (("constraint_jacobian", t["J"]), ("constraint_drift", t["drift"]),
                         ("independent_rows", t["keep"].astype(float)),
                         ("constrained_vdot", t["vdot"]),
                         ("constraint_multipliers", t["lam"])):
            arrays[f"{pre}/{qty}/{e}"] = arr
        roundoff.store_engine(arrays, fx, e, t)
        res = C.residuals(t["J"], t["drift"], t["vdot"], V, t["keep"], t["nearly"], t["c"],
                          t["d"], t["rate"], t["rate2"])
        zeros = {"constraint_velocity": res["velocity"],
                 "constraint_acceleration": res["acceleration"]}
        dropped = ~t["keep"]
        if t["nearly"].any():
            zeros["released_acceleration"] = res["released_acceleration"]
        if dropped.any():
            for k in ("d", "rate", "rate2"):
                arrays[f"{pre}/release/{k}/{e}"] = t[k]
            for k in ("row_velocity", "row_acceleration", "allow_velocity",
                      "allow_acceleration"):
                arrays[f"{pre}/release/{k}/{e}"] = res[k]
        if t["g"] is not None:
            zeros["constraint_residual"] = np.abs(t["g"]).max(axis=1)
        else:
            records.append(_single(fx, "constraint_residual", e, "not_provided", t["g_why"]))
        for qty, val in zeros.items():
            key = f"{pre}/{qty}/{e}"
            arrays[key] = val[:, None]
            dkey = f"{pre}/{qty}/declared"
            arrays[dkey] = np.zeros((samples, 1))
            qn = qty + (_cls(adapters, e) if qty in F32_ZERO else "")
            records.append(compare(f"{fx}/{NAME}/{qty}/declared~{e}", NAME, fx, qn,
                                   "declared", e, arrays[dkey], arrays[key],
                                   lookup(NAME, qn), dkey, key, labels, lkey))
        if dropped.any():
            records.append(Record(
                id=f"{fx}/{NAME}/dependent_rows/{e}", stage=NAME, fixture=fx,
                quantity="dependent_rows", engine_a=e, engine_b="", status="informational",
                n_samples=samples, reason=_dependent_note(spec, t, res, samples)))
    # engine pairs
    for a, b in itertools.combinations([e for e in engines if e in adapters], 2):
        why = (blocked_engine.get(a) and f"{a} {blocked_engine[a]}") or \
              (blocked_engine.get(b) and f"{b} {blocked_engine[b]}") or \
            blocked_pair.get((a, b))
        for qty in PAIR_QUANTITIES:
            rid = f"{fx}/{NAME}/{qty}/{a}~{b}"
            if why:
                records.append(Record(id=rid, stage=NAME, fixture=fx, quantity=qty,
                                      engine_a=a, engine_b=b, status="not_scored",
                                      reason=why))
                continue
            if a not in terms or b not in terms:
                continue
            ka, kb = f"{pre}/{qty}/{a}", f"{pre}/{qty}/{b}"
            qn = qty + _cls(adapters, a, b)  # a float32 engine: the float32 class
            T = roundoff.terms_of(qn, ka, kb, arrays)
            records.append(
                compare(rid, NAME, fx, qn, a, b, arrays[ka], arrays[kb], lookup(NAME, qn),
                        ka, kb, labels, lkey) if T is None else
                roundoff.terms_compare(rid, fx, qn, a, b, arrays[ka], arrays[kb],
                                       lookup(NAME, qn), ka, kb, labels, lkey, T))
    # native solvers
    for e in terms:
        records += _native_rows(model, adapters[e], e, terms[e], Q, V, TAU, arrays, labels,
                                lkey, progress)
    # constrained rollouts (drift): reference engine
    if ref_name in terms:
        records += constrained_rollout.stage_rows(model, ref, ref_name, Q[0], V[0], arrays)
    return records


def _dependent_note(spec, t, res, samples) -> str:
    """The dependent_rows note: which rows were dropped, in how many states, and whether
    each is exactly dependent (its distance d from the kept rows' span at round-off:
    d ≤ atol of constrained/exact_dependence × (1 + ‖c‖₁) σ_max) or nearly but not
    exactly, by how much, and the largest residuals its release leaves."""
    rl = C.row_labels(spec)
    keep, d = t["keep"], t["d"]
    dropped = ~keep
    smax = np.array([np.linalg.norm(J, 2) for J in t["J"]])
    rel = d / np.where(smax > 0, smax, 1.0)[:, None]
    nearly = t["nearly"]
    slack = lookup(NAME, "constraint_acceleration").atol
    used = res["row_acceleration"] / (res["allow_acceleration"] + slack)
    parts = []
    for i in range(len(rl)):
        if not dropped[:, i].any():
            continue
        s = dropped[:, i]
        head = f"{rl[i]} (in {int(s.sum())} of {samples} states)"
        if not nearly[s, i].any():
            parts.append(f"{head}: exactly dependent (distance from the kept rows' span "
                         f"≤ {rel[s, i].max():.2g} σ_max: round-off, within "
                         f"constrained/exact_dependence × (1 + ‖c‖₁))")
        else:
            parts.append(
                f"{head}: nearly but not exactly dependent (distance d from the kept rows' "
                f"span {rel[s, i].min():.2g}–{rel[s, i].max():.2g} σ_max, below the rank "
                f"threshold); released: |Jv| up to {res['row_velocity'][s, i].max():.2g} "
                f"on it (≤ d|v| + ‖c‖₁‖J_K v‖∞, up to "
                f"{res['allow_velocity'][s, i].max():.2g}), |Jv̇ + J̇v| up to "
                f"{res['row_acceleration'][s, i].max():.2g}, checked against d|v̇|, the kept "
                f"rows' residuals and its measured rate δa (up to "
                f"{np.abs(t['rate'][s, i]).max():.2g}) in released_acceleration, up to "
                f"{used[s, i].max():.2g} of that bound")
    ranks = sorted({int(x) for x in keep.sum(axis=1)})
    return (f"dependent constraint rows detected (SVD rank {ranks} of {len(rl)} rows, "
            f"threshold constrained/rank) and removed before the solve (λ = 0 there): "
            f"{'; '.join(parts)}; {t['f_api']}")


def _integrate_of(adapter: EngineAdapter, ref: EngineAdapter, q: NDArray[np.float64]
                  ) -> Callable[..., NDArray[np.float64]] | None:
    """None where ``adapter`` integrates q ⊕ v·t itself (tried at q (nq,)), else the
    reference engine's (MuJoCo Warp has no position update outside a whole step)."""
    try:
        adapter.integrate(q, np.zeros(adapter.nv), 0.0)
        return None
    except NotProvided:
        return ref.integrate


def _single(fx, qty, e, status, reason):
    return Record(id=f"{fx}/{NAME}/{qty}/{e}", stage=NAME, fixture=fx, quantity=qty,
                  engine_a=e, engine_b="", status=status, reason=reason)


def _native_rows(model, adapter, e, t, Q, V, TAU, arrays, labels, lkey, progress):
    fx = model.name
    pre = f"out/{fx}/{NAME}"
    if not isinstance(adapter, HasConstrainedDynamics):
        return [_single(fx, "native_vdot", e, "not_provided",
                        "the adapter exposes no constrained solver of the engine's own")]
    if progress:
        progress(f"{fx}: stage {NAME}: {e} native solver")
    problem = C.NativeProblem(model.spec, Q, V, TAU, t["J"], t["drift"], t["keep"])
    try:
        results = adapter.native_constrained(problem)
    except NotProvided as err:
        return [_single(fx, "native_vdot", e, "not_provided", err.why)]
    except Exception as err:  # noqa: BLE001 - e.g. Drake SAP's subprocess crashed
        return [_single(fx, "native_vdot", e, "error", f"{type(err).__name__}: "
                        f"{' '.join(str(err).split())}")]
    out = []
    kkt_v, kkt_l = f"{pre}/constrained_vdot/{e}", f"{pre}/constraint_multipliers/{e}"
    for r in results:
        who = f"{e}:{r['solver']}"
        kv = f"{pre}/native_vdot/{who}"
        arrays[kv] = np.asarray(r["vdot"], dtype=float)
        if r["exact"]:
            out.append(_native_row(fx, "native_vdot", who, arrays, kv, kkt_v, labels, lkey,
                                   f"exact native solver vs {e}'s KKT answer — {r['law']}"))
            if r["lam"] is not None:
                kl = f"{pre}/native_lambda/{who}"
                arrays[kl] = np.asarray(r["lam"], dtype=float)
                out.append(_native_row(fx, "native_lambda", who, arrays, kl, kkt_l, labels,
                                       lkey, f"exact native solver vs {e}'s KKT multipliers "
                                             f"— {r['law']}"))
        else:
            out.append(inform(f"{fx}/{NAME}/native_vdot/{who}", NAME, fx, "native_vdot",
                              who, "", arrays[kv], arrays[kkt_v], kv, kkt_v, labels, lkey,
                              reason=f"native solver that does not solve the KKT equations "
                                     f"(soft, velocity-level or another rank rule) vs {e}'s "
                                     f"exact KKT answer (informational, never tuned) — "
                                     f"{r['law']}"))
    return out


def _native_row(fx, qty, who, arrays, k_native, k_kkt, labels, lkey, law) -> Record:
    """An exact native solver's row against the same engine's KKT answer, scored with the
    round-off of the KKT terms (roundoff.py) where they are stored; its reason states the
    solver's law, then the bound where the bound decided."""
    rid = f"{fx}/{NAME}/{qty}/{who}"
    T = roundoff.terms_of(qty, k_native, k_kkt, arrays)
    a, b, tol = arrays[k_native], arrays[k_kkt], lookup(NAME, qty)
    rec = (compare(rid, NAME, fx, qty, who, "", a, b, tol, k_native, k_kkt, labels, lkey)
           if T is None else roundoff.terms_compare(rid, fx, qty, who, "", a, b, tol,
                                                    k_native, k_kkt, labels, lkey, T))
    rec.reason = law + (f"; {rec.reason}" if rec.status == "passed" and rec.reason else "")
    return rec


# ----- report ------------------------------------------------------------------------------
def report_context(manifest: dict[str, Any], records: list[Record],
                   arrays: dict[str, NDArray[Any]],
                   timings: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Per constraint fixture: pair rows, diagnostics, notes, native rows, drift plot."""
    if not any(r.stage == NAME for r in records):
        return []
    out = []
    fixtures = [f["name"] for f in manifest["fixtures"]]
    for fx in fixtures:
        recs = [r for r in records if r.stage == NAME and r.fixture == fx]
        if not recs:
            continue
        rows = arrays.get(f"labels/{fx}/{NAME}/rows")
        out.append({
            "fixture": fx,
            "rows": [str(x) for x in rows] if rows is not None else [],
            "pairs": [r for r in recs if r.engine_b and r.engine_a != "declared"],
            "diagnostics": [r for r in recs if r.engine_a == "declared"],
            "notes": [r for r in recs if r.quantity == "dependent_rows"],
            "native": [r for r in recs if r.quantity.startswith("native_")
                       or (r.quantity == "constrained_vdot" and not r.engine_b)],
            "rollout": [r for r in recs if r.quantity.startswith("rollout_")],
            "plot": constrained_rollout.drift_plot(fx, arrays),
        })
    return out


# ----- command-line summary ------------------------------------------------------------------
def coupling_summary_lines(manifest: dict[str, Any], records: Sequence[Record]) -> list[str]:
    """One line per fixture whose joints are coupled (``COUPLING_NOTE`` in its notes): the
    couplings, the engines whose KKT answer stage 3 computed through them and the engines
    whose own solver held them (exact or informational), or that stage 3 did not run; and
    one line per fixture with joints an import froze (``FROZEN_NOTE``)."""
    out = []
    for f in manifest.get("fixtures", []):
        fx, notes = f["name"], f.get("notes", [])
        coupled = [n.split(COUPLING_NOTE, 1)[1].split(" (", 1)[0] for n in notes
                   if n.startswith("joint ") and f": {COUPLING_NOTE}" in n]
        frozen = [n.split(":", 1)[0].removeprefix("joint ") + " (" +
                  n.split(FROZEN_NOTE, 1)[1] + ")" for n in notes
                  if n.startswith("joint ") and f": {FROZEN_NOTE}" in n]
        if coupled:
            recs = [r for r in records if r.stage == NAME and r.fixture == fx]
            kkt = sorted({r.engine_b for r in recs if r.engine_a == "declared"
                          and r.quantity == "constraint_acceleration"})
            native = sorted({f"{r.engine_a} ({'exact' if r.status != 'informational' else 'soft'})"
                             for r in recs if r.quantity == "native_vdot"
                             and r.status not in ("not_provided", "error")})
            failed = sum(r.status in ("failed", "error") for r in recs)
            how = (f"compared in stage 3 through the KKT of {len(kkt)} engines "
                   f"({', '.join(kkt)}){'; natively: ' + ', '.join(native) if native else ''}"
                   f"; {failed} stage-3 rows failed or in error" if recs else
                   "NOT compared: stage 3 did not run")
            out.append(f"{fx}: couplings: {'; '.join(coupled)} ({how})")
        if frozen:
            out.append(f"{fx}: frozen: {'; '.join(frozen)}")
    return out
