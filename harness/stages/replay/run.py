"""Running the replay cases in every engine: agreement, horizon and convergence runs, the
engines' own stepping, the refinement gate and the records they produce.

Dimension legend: N knots; nq, nv canonical; K levels of a convergence sweep.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.errors import EngineUnavailable, ModelRejected
from harness.core.records import Record
from harness.core.tolerances import lookup, precision_class
from harness.model import registry
from harness.model.candidate import Controls
from harness.model.integrators import Method, impulse_reset, rollout, spans, steps_per_interval
from harness.model.protocol import HasNativeRollout
from harness.stages.replay.cases import (
    NAME,
    NATIVE,
    REFERENCE_ATOL,
    REFERENCE_RTOL,
    THRESHOLDS,
    Case,
    ReplayResult,
    array_key,
    record_id,
    tolerance_json,
)
from harness.stages.replay.measures import (
    Observer,
    actual_step,
    first_exceed,
    pick_observer,
    window_length,
)
from harness.stages.replay.recompute import recompute_record


# ----- runs -------------------------------------------------------------------------------------
def _controls_fn(controls: Controls):
    return lambda k, t: controls.segment(k)(t)


def _twin_v0(v0):
    d = lookup(NAME, "twin_perturbation").atol
    return v0 + d * np.ones_like(v0) / math.sqrt(v0.size)


def _truncate(controls: Controls, n: int) -> Controls:
    """Controls restricted to the first n knots (n ≥ 2)."""
    return controls.sub(0, n - 1)


def _rollout_until(adapter, q0, v0, controls, method, damping, base_x, tol):
    """Twin run: integrate knot by knot and stop at the first knot outside the band of
    base_x (that knot included). Returns x (n, nq + nv)."""
    N = controls.t.size
    chunk = max(8, N // 16)
    xs = [np.concatenate([q0, v0])[None]]
    q, v = q0, v0
    k = 0
    while k < N - 1:
        n = min(chunk, N - 1 - k)
        sub = controls.sub(k, k + n)
        r = rollout(adapter, q, v, sub, method, damping)
        x = r.x[1:]
        idx = first_exceed(x, base_x[k + 1:k + 1 + n], tol)
        if idx is not None:
            xs.append(x[:idx + 1])
            break
        xs.append(x)
        q, v = r.q[-1], r.v[-1]
        k += n
    return np.vstack(xs)


def blocked_by(records: Iterable[Record]
               ) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str, str], str]]:
    """({(fixture, engine): reason}, {(fixture, a, b): reason}) from earlier stages (the
    runner's gating rule)."""
    be, bp = {}, {}
    for r in records:
        if r.stage == NAME or r.status not in ("failed", "error"):
            continue
        msg = f"stage {r.stage} {r.quantity} " + (
            f"failed (max_rel {r.max_rel:.3g})" if r.max_rel is not None else r.status)
        if r.engine_a == "declared":
            be.setdefault((r.fixture, r.engine_b), f"disagrees with the declared model: {msg}")
        elif r.engine_b == "":
            be.setdefault((r.fixture, r.engine_a), msg)
        else:
            bp.setdefault((r.fixture, r.engine_a, r.engine_b), msg)
    return be, bp


# A float32 engine (its ``precision`` attribute) is replayed on a case of its own: the
# first F32_KNOTS knots of each agreement or horizon case (scored by agreement: the
# horizon's twin perturbation, 1e-10, is below float32's resolution of v0), with every
# engine of the run, its rows in the float32 class of the replay (…/float32). Its host-
# driven calls cost ~4 ms a force evaluation and ~33 ms a native RK4 step on a CPU device
# (2 s of chain7 with its refined runs: ~4 min), so its horizon is shortened to 0.2 s.
F32_KNOTS = 21  # knots of a float32 engine's case: 0.2 s on the 0.01 s grids
F32_SUFFIX = ".float32"  # its case name: "<case>.float32"
FLOAT32_CONVERGENCE = ("single precision: a convergence sweep measures the state error of "
                       "each step size against a DOP853 reference at rtol 1e-13 down to "
                       "~1e-9, below the round-off a float32 engine's v̇ (≤ 1.5e-5 "
                       "relative per evaluation, dynamics/forward_dynamics/float32) leaves "
                       "in every run, so the observed order would measure float32 "
                       "round-off, not the integrator")


def float32_case(case: Case) -> Case:
    """``case`` on its first F32_KNOTS knots, scored by agreement (module comment)."""
    cand = case.candidate
    n = min(F32_KNOTS, cand.t.size)
    if n < cand.t.size and cand.t[n - 1] == cand.t[n]:
        n -= 1  # not between the two knots of an event
    short = dataclasses.replace(cand, t=cand.t[:n].copy(), tau=cand.tau[:n].copy(),
                                events=tuple(e for e in cand.events if e.t < cand.t[n - 1]))
    return Case(case.name + F32_SUFFIX, short, "agreement", case.method, case.native,
                dict(case.native_settings))


def _jobs(cases: Sequence[Case], engines: Sequence[str], classes: dict[str, Any]
          ) -> tuple[list[tuple[Case, list[str]]], list[Record]]:
    """([(case, its engines)], not_provided rows): each case with the double engines,
    and for float32 engines its shortened copy with every engine (a convergence case has
    none: FLOAT32_CONVERGENCE)."""
    f32 = [e for e in engines if precision_class(classes[e])]
    double = [e for e in engines if e not in f32]
    jobs, rows = [], []
    for case in cases:
        jobs.append((case, double))
        if not f32:
            continue
        if case.mode == "convergence":
            fx = case.candidate.model.name
            rows += [Record(id=record_id(case.name, fx, "run", "run", e), stage=NAME,
                            fixture=fx, quantity="run", engine_a=e, engine_b="",
                            status="not_provided", reason=FLOAT32_CONVERGENCE) for e in f32]
            continue
        jobs.append((float32_case(case), list(engines)))
    return jobs, rows


def run(cases: Sequence[Case], engines: Sequence[str], earlier_records: Iterable[Record] = (),
        progress: Callable[[str], None] | None = None) -> ReplayResult:
    """Replay every case with every engine; records (stage 'replay'), arrays, manifest info."""
    records, arrays, info = [], {}, {"cases": {}}
    be, bp = blocked_by(earlier_records)
    classes = {e: registry.adapter_class(e) for e in engines}
    jobs, records = _jobs(cases, engines, classes)
    for case, engines in jobs:
        cand = case.candidate
        fx = cand.model.name
        say = progress or (lambda m: None)
        say(f"replay {case.name}: loading {fx} into {', '.join(engines)}")
        adapters, load_fail = {}, {}
        for e in engines:
            try:
                adapters[e] = classes[e](cand.model)
            except (ModelRejected, EngineUnavailable, RuntimeError, ValueError) as err:
                load_fail[e] = str(err)
        for e, why in load_fail.items():
            records.append(Record(id=record_id(case.name, fx, "load", "load", e), stage=NAME,
                                  fixture=fx, quantity="load", engine_a=e, engine_b="",
                                  status="error", reason=why))
        if not adapters:
            continue  # every engine failed to load: the error rows say why
        blocked = {e: f"{e} {be[(fx, e)]}" for e in adapters if (fx, e) in be}
        for e, why in load_fail.items():
            blocked[e] = f"{e} failed to load: {why}"
        obs_engine = pick_observer({e: a for e, a in adapters.items() if e not in blocked}
                                   or adapters)
        observer = Observer(adapters[obs_engine], cand.model, cand.markers)
        t = cand.t
        arrays[array_key(case.name, "t")] = t.copy()
        ev = {k for k in range(t.size - 1) if t[k] == t[k + 1]}  # before / after an event
        arrays[array_key(case.name, "labels")] = np.array([
            f"t = {x:.4f} s" + (" (before the event)" if i in ev else
                                " (after the event)" if i - 1 in ev else "")
            for i, x in enumerate(t)])
        arrays[array_key(case.name, "in", "q0")] = cand.q0.copy()
        arrays[array_key(case.name, "in", "v0")] = cand.v0.copy()
        arrays[array_key(case.name, "in", "tau")] = cand.tau.copy()
        cinfo = {"fixture": fx, "mode": case.mode, "observer": obs_engine,
                 "frames": list(observer.frames),
                 "layout": [[s.name, s.type, s.iq, s.nq, s.iv, s.nv]
                            for s in cand.model.layout.slots],
                 "candidate": cand.summary(), "engines": list(adapters), "runs": {},
                 "thresholds": {f"{NAME}/{q}": tolerance_json(q) for q in THRESHOLDS}}
        info["cases"][case.name] = cinfo
        if case.mode == "convergence":
            _run_convergence(case, adapters, blocked, observer, records, arrays, cinfo, say)
        else:
            _run_replay(case, adapters, blocked, bp, observer, records, arrays, cinfo, say)
    return ReplayResult(records, arrays, info, _split_timings(info))


def _split_timings(info) -> dict:
    """Move every ``wall_s`` out of the manifest section into {case: {run: {engine: ...}}}."""
    out = {}
    for name, c in info["cases"].items():
        for run, r in c["runs"].items():
            walls = dict(r.pop("wall_s", {}))
            for e, n in r.get("engines", {}).items():
                if "wall_s" in n:
                    walls[e] = n.pop("wall_s")
            if walls:
                out.setdefault(name, {})[run] = walls
    return out


def settings_text(settings: dict[str, Any]) -> str:
    """A native run's settings as a progress line shows them: "integrator RK4 dt 0.001"
    ("defaults" when there are none)."""
    return " ".join(f"{k} {v}" for k, v in settings.items()) or "defaults"


def merge_timings(info: dict, timings: dict | None) -> dict:
    """A copy of a manifest's replay section with the wall times put back (for the report)."""
    import copy

    info = copy.deepcopy(info)
    for name, runs in (timings or {}).items():
        for run, walls in runs.items():
            r = info.get("cases", {}).get(name, {}).get("runs", {}).get(run)
            if r is None:
                continue
            if r.get("kind") == "native":
                for e, w in walls.items():
                    if e in r.get("engines", {}):
                        r["engines"][e]["wall_s"] = w
            else:
                r["wall_s"] = walls
    return info


def _run_replay(case, adapters, blocked, bp, observer, records, arrays, cinfo, say):
    cand, fx, name = case.candidate, case.candidate.model.name, case.name
    lay = cand.model.layout
    controls = cand.controls()
    D = lay.damping
    m = case.method
    run = harness_run(case)
    m_ref = m.refined(cand.t)  # a finer discretisation on every interval of the grid
    traj_tol = lookup(NAME, "trajectory")
    N = cand.t.size
    cinfo["runs"][run] = {"kind": "harness", "settings": m.settings(cand.t),
                          "refined": m_ref.settings(cand.t),
                          "statement": f"harness {m.name} over each engine's forward_dynamics "
                                       f"(canonical ⊕ for configurations; identical "
                                       f"arithmetic for every engine)"
                                       + _step_statement(m, cand.t)}
    gates, ok = {}, []
    for e, a in adapters.items():
        if e in blocked:
            continue
        say(f"replay {name}: {e} {run}")
        pre = array_key(name, run, e)
        try:
            base = rollout(a, cand.q0, cand.v0, controls, m, D)
            arrays[pre + "/x"] = base.x
            arrays[pre + "/work"] = base.work
            n_w = N
            if case.mode == "horizon":
                xt = _rollout_until(a, cand.q0, _twin_v0(cand.v0), controls, m, D, base.x,
                                    traj_tol)
                arrays[pre + "/x_twin"] = xt
                n_w = window_length(arrays, name, run, e)
            ref = rollout(a, cand.q0, cand.v0, _truncate(controls, max(n_w, 2)), m_ref, D)
            arrays[pre + "/x_refined"] = ref.x[:n_w]
            # wall times are not evidence (they differ run to run): run() moves them out
            # of the manifest section into timings.json
            cinfo["runs"][run].setdefault("wall_s", {})[e] = [base.wall_s, ref.wall_s]
            arrays[pre + "/nfev"] = np.array([base.nfev, ref.nfev], dtype=float)
            P = observer.poses(base.q)
            arrays[pre + "/frames"] = P
            arrays[pre + "/markers"] = observer.marker_positions(P)
            arrays[pre + "/energy"] = observer.energy(base.q, base.v, P)
        except Exception as err:  # an engine raised: recorded, never hidden
            records.append(Record(id=record_id(name, fx, run, "run", e), stage=NAME, fixture=fx,
                                  quantity="run", engine_a=e, engine_b="", status="error",
                                  reason=f"{type(err).__name__}: {err}"))
            for k in [k for k in arrays if k.startswith(pre + "/")]:
                del arrays[k]
            continue
        ok.append(e)
        cls = precision_class(a)
        gates[e] = recompute_record(_stub(name, fx, run, "refinement", e, pre + "/x",
                                          pre + "/x_refined", cls=cls), arrays, {})
        records.append(gates[e])
        records.append(recompute_record(_stub(name, fx, run, "energy_balance", e,
                                              pre + "/energy", pre + "/work", cls=cls),
                                        arrays, {gates[e].id: gates[e]}))
    for e in adapters:
        if e in blocked:
            for q in ("refinement", "energy_balance"):
                records.append(Record(id=record_id(name, fx, run, q, e), stage=NAME, fixture=fx,
                                      quantity=q, engine_a=e, engine_b="", status="not_scored",
                                      reason=blocked[e]))
    for a, b in itertools.combinations(list(adapters), 2):
        rid = record_id(name, fx, run, "trajectory", f"{a}~{b}")
        why = blocked.get(a) or blocked.get(b) or bp.get((fx, a, b))
        if why:
            records.append(Record(id=rid, stage=NAME, fixture=fx, quantity="trajectory",
                                  engine_a=a, engine_b=b, status="not_scored", reason=why))
            continue
        if a not in ok or b not in ok:
            continue  # the error row explains it
        stub = _stub(name, fx, run, "trajectory", f"{a}~{b}", array_key(name, run, a, "x"),
                     array_key(name, run, b, "x"), a, b,
                     cls=precision_class(adapters[a], adapters[b]))
        records.append(recompute_record(stub, arrays, {g.id: g for g in gates.values()}))
    if case.native:
        _run_native(case, adapters, blocked, ok, gates, records, arrays, cinfo, say)


def _run_native(case, adapters, blocked, ok, gates, records, arrays, cinfo, say):
    cand, fx, name = case.candidate, case.candidate.model.name, case.name
    controls = cand.controls()
    run = NATIVE
    cinfo["runs"][run] = {"kind": "native", "engines": {}}
    for e, a in adapters.items():
        rid = record_id(name, fx, run, "native", e)
        if not isinstance(a, HasNativeRollout):
            records.append(Record(id=rid, stage=NAME, fixture=fx, quantity="native",
                                  engine_a=e, engine_b="", status="not_provided",
                                  reason=f"{e} has no time stepping of its own (only "
                                         "dynamics functions)"))
            continue
        if e in blocked or e not in ok:
            records.append(Record(id=rid, stage=NAME, fixture=fx, quantity="native",
                                  engine_a=e, engine_b="", status="not_scored",
                                  reason=blocked.get(e, f"{e}: its harness reference run "
                                                        "raised")))
            continue
        pre = array_key(name, run, e)
        try:
            settings, statement = a.native_describe(case.native_settings.get(e))
            refined = refine_native(settings, cand.t)
            say(f"replay {name}: {e} native {settings_text(settings)}")
            t0 = time.perf_counter()
            Q, V = _native_phases(a, cand, controls, settings)
            t1 = time.perf_counter()
            Qr, Vr = _native_phases(a, cand, controls, refined)
            t2 = time.perf_counter()
        except Exception as err:
            records.append(Record(id=rid, stage=NAME, fixture=fx, quantity="native",
                                  engine_a=e, engine_b="", status="error",
                                  reason=f"{type(err).__name__}: {err}"))
            continue
        ref_run = harness_run(case)
        n_w = arrays[array_key(name, ref_run, e, "x_refined")].shape[0]  # window
        arrays[pre + "/x"] = np.hstack([Q, V])
        arrays[pre + "/x_refined"] = np.hstack([Qr, Vr])[:n_w]
        cinfo["runs"][run]["engines"][e] = {"settings": settings, "refined": refined,
                                            "statement": statement,
                                            "effective_dt": [native_effective_dt(x, cand.t)
                                                             for x in (settings, refined)],
                                            "wall_s": [t1 - t0, t2 - t1]}
        cls = precision_class(a)
        g = recompute_record(_stub(name, fx, run, "refinement", e, pre + "/x",
                                   pre + "/x_refined", cls=cls), arrays, {})
        records.append(g)
        ref_gate = gates[e]
        stub = _stub(name, fx, run, "native", e, pre + "/x",
                     array_key(name, ref_run, e, "x_refined"), cls=cls)
        records.append(recompute_record(stub, arrays, {g.id: g, ref_gate.id: ref_gate}))


def _native_phases(a, cand, controls, settings):
    """(Q (N, nq), V (N, nv)) of the engine's own stepping over the candidate's knots,
    phase by phase: between phases the event's impulse reset (integrators.impulse_reset,
    the engine's own mass matrix and frame Jacobian), which no engine's stepping applies
    itself. Without events: one native_rollout."""
    t = cand.t
    cuts = [k for k in range(t.size - 1) if t[k] == t[k + 1]]
    if not cuts:
        return a.native_rollout(cand.q0, cand.v0, t, _controls_fn(controls), settings)
    Qs, Vs, q, v, a0 = [], [], cand.q0, cand.v0, 0
    for b in cuts + [t.size - 1]:  # phase [a0, b]; its first row is its start state
        Q, V = a.native_rollout(q, v, t[a0:b + 1], _controls_fn(controls.sub(a0, b)),
                                settings)
        Qs.append(Q)
        Vs.append(V)
        if b < t.size - 1:
            q = Q[-1]
            v, _ = impulse_reset(a, q, V[-1], controls.event_at(b))
            a0 = b + 1
    return np.vstack(Qs), np.vstack(Vs)


def harness_run(case: Case) -> str:
    """The run label of a case's harness integrator: its effective step on the grid."""
    return case.method.label_on(case.candidate.t)


def _step_statement(m: Method, t) -> str:
    """'' or the sentence saying the effective step differs from the dt asked for."""
    if m.name == "dop853":
        return ""
    h = m.effective_dt(t)
    if abs(h - m.dt) <= 1e-9 * m.dt:
        return ""
    n = m.steps(t)
    return (f"; dt {m.dt:g} s asked, effective step {h:g} s ({int(n.min())}–{int(n.max())} "
            f"steps per knot interval: the knots bound the step)")


def native_effective_dt(settings: dict[str, Any], t: ArrayLike) -> float | None:
    """[s] the largest step a fixed-step native run takes on the knots t (the engines'
    rule, ceil(interval / dt) equal steps per interval), or None (error-controlled)."""
    if "dt" not in settings:
        return None
    return float(max(x / steps_per_interval(float(x), settings["dt"]) for x in spans(t)))


def refine_native(settings: dict[str, Any], t: NDArray[np.float64] | None = None) -> dict[str, Any]:
    """Engine-blind refinement of native settings: ``accuracy`` / 100, or a ``dt`` at most
    half the effective step of every knot interval of t (the engines step each interval
    in ceil(interval / dt) equal steps, so halving a dt longer than an interval would
    change nothing): dt/2 when dt divides the intervals, else half the smallest
    effective step."""
    out = dict(settings)
    if "dt" in out:
        dt = out["dt"]
        if t is not None and len(t) >= 2:
            h = min(float(x) / steps_per_interval(float(x), dt) for x in spans(t))
            dt = dt if h >= dt * (1.0 - 1e-9) else h
        out["dt"] = dt * 0.5
    elif "accuracy" in out:
        out["accuracy"] = out["accuracy"] * 0.01
    else:
        raise ValueError(f"native settings {settings} have neither dt nor accuracy to refine")
    return out


def _stub(case, fx, run, quantity, who, key_a, key_b, a=None, b=None, cls=""):
    """What to compute (ids and array keys); recompute_record makes the record itself.
    Its placeholder status is "error", so a stub that escaped would fail, never pass.
    ``cls``: the tolerance class ("/float32") the record's quantity carries (not its id)."""
    return Record(id=record_id(case, fx, run, quantity, who), stage=NAME, fixture=fx,
                  quantity=quantity + cls, engine_a=a or who, engine_b=b or "", status="error",
                  reason="not computed", key_a=key_a, key_b=key_b,
                  key_labels=array_key(case, "labels"))


# ----- convergence sweeps ---------------------------------------------------------------------
def _run_convergence(case, adapters, blocked, observer, records, arrays, cinfo, say):
    cand, fx, name = case.candidate, case.candidate.model.name, case.name
    controls = cand.controls()
    D = cand.model.layout.damping
    ref_m = Method("dop853", rtol=REFERENCE_RTOL, atol=REFERENCE_ATOL)
    for e, a in adapters.items():
        if e in blocked:
            for base, _ in case.sweep:
                records.append(Record(id=record_id(name, fx, base.name, "convergence_order", e),
                                      stage=NAME, fixture=fx, quantity="convergence_order",
                                      engine_a=e, engine_b="", status="not_scored",
                                      reason=blocked[e]))
            continue
        say(f"replay {name}: {e} reference {ref_m.label}")
        try:
            ref = rollout(a, cand.q0, cand.v0, controls, ref_m, D)
        except Exception as err:
            records.append(Record(id=record_id(name, fx, "reference", "run", e), stage=NAME,
                                  fixture=fx, quantity="run", engine_a=e, engine_b="",
                                  status="error", reason=f"{type(err).__name__}: {err}"))
            continue
        arrays[array_key(name, "conv", e, "x_ref")] = ref.x
        for base, levels in case.sweep:
            pre = array_key(name, "conv", e, base.name)
            cinfo["runs"].setdefault(base.name, {"kind": "convergence",
                                                 "settings": base.settings(cand.t),
                                                 "levels": levels,
                                                 "reference": ref_m.settings()})
            say(f"replay {name}: {e} {base.name} sweep ({levels} levels)")
            try:
                m, hs, walls, energies, moms = base, [], [], [], []
                for j in range(levels):
                    r = rollout(a, cand.q0, cand.v0, controls, m, D)
                    arrays[f"{pre}/x_{j}"] = r.x
                    hs.append(actual_step(cand.t, m) if m.name != "dop853" else m.rtol)
                    walls.append(r.wall_s)
                    P = observer.poses(r.q)
                    energies.append(observer.energy(r.q, r.v, P))
                    L = observer.angular_momentum(r.q, r.v, P)
                    if L is not None:
                        moms.append(L)
                    m = m.refined(cand.t)
                arrays[pre + "/h"] = np.array(hs)
                cinfo["runs"][base.name].setdefault("wall_s", {})[e] = walls
                arrays[pre + "/energy"] = np.stack(energies)
                if moms:
                    arrays[pre + "/momentum"] = np.stack(moms)
            except Exception as err:
                records.append(Record(id=record_id(name, fx, base.name, "run", e), stage=NAME,
                                      fixture=fx, quantity="run", engine_a=e, engine_b="",
                                      status="error", reason=f"{type(err).__name__}: {err}"))
                continue
            if base.name != "dop853":  # an adaptive method has no step to refine
                records.append(recompute_record(_stub(name, fx, base.name, "convergence_order",
                                                      e, pre + "/h",
                                                      array_key(name, "conv", e, "x_ref")),
                                                arrays, {}))
