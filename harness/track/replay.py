"""`harness track`'s replay: the tracked motion integrated open loop in every available
double-precision engine under the generalized forces of our inverse dynamics plus the
measured loads, in segments no longer than the predictability horizon, each started from
the tracked state at its first knot; scored per segment against the tracked q(t) and
engine against engine.

Dimensions: F frames of the window, R = P (F − 1) + 1 replay knots (P per frame
interval), nq = nv canonical coordinates, n OpenSim coordinates. Units: s, rad | m,
rad/s | m/s, N | N·m.

Knots: the Chebyshev–Lobatto points of degree P = ``KNOTS_PER_FRAME`` (8) in every frame
interval, so the controls are ``lobatto<P>`` (harness/model/candidate.py): τ(t) is
represented closely where it is smooth between frames (our ID of the quintic spline
is), where samples at the frames with a cubic leave O(Δt⁴) defects. At each knot the
tracked state is the natural quintic spline through the frames (harness/track/
dynamics.py, the same q(t) the ID differentiates: the IK, low-passed with
``--lowpass-hz``), the followers of couplings held to their leaders, and the control is
τ = τ_ID + Σ_L J_pᵀ F + J_ωᵀ T: our inverse dynamics' generalized forces on every
canonical joint (a coupling's follower carries the coupling's share, so the tree the
engines integrate follows the coupled motion) plus the measured loads, splined at the
knot's time and mapped through the Jacobians at the tracked configuration (folded into
the generalized forces, as the swing folds its foot forces: no engine applies them at the
replayed configuration).

Horizon: the whole window is replayed once in horizon mode (the replay stage,
harness/stages/replay: a twin run whose v0 differs by the stage-2 parity claim's size;
the knots before it leaves the agreement band); the shortest of the engines' windows is
the predictability horizon. The window is then tiled into segments no longer than it
(harness/stages/replay/segments.py, boundaries on the frames), each replayed in every
engine as an ``agreement`` case of the replay stage (its records: the refinement gate,
the energy balance, every engine pair's trajectory band over the whole segment).

Verdict per engine and segment: the largest deviation of its replayed OpenSim
coordinates from the tracked ones over the segment's knots within
``track/replay_vs_tracked`` (harness/core/tolerances.py), and every replay record of the
segment that involves the engine passed. ``engines_replayed``: the engines that passed
every segment.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.capture.ik import Held
from harness.capture.motion_files import ExternalForce, Table
from harness.core.tolerances import lookup, precision_class
from harness.model import registry
from harness.model.candidate import Candidate, from_arrays
from harness.model.integrators import Method
from harness.model.prepared import PreparedModel
from harness.model.protocol import EngineAdapter
from harness.stages.replay import run as replay_stage
from harness.stages.replay import segments
from harness.stages.replay.cases import Case, array_key
from harness.stages.replay.measures import window_length
from harness.track import dynamics

KNOTS_PER_FRAME = 8  # P: lobatto<P> controls, Chebyshev–Lobatto points per frame interval
METHOD = Method("rk4", dt=5e-4)  # at 1 ms raw gait kinematics fail the energy balance
NOT_RUN_NO_ENGINE = "no double-precision engine is available here to replay the motion"

_F = NDArray[np.float64]


@dataclass(frozen=True)
class Tracked:
    """The tracked motion on the replay knots: t (R,) s, Q (R, nq), V (R, nv), the
    controls tau (R, nv) [N | N·m] and their measured-load part ext (R, nv)."""
    t: _F
    Q: _F
    V: _F
    tau: _F
    ext: _F


def knots(t: _F, P: int = KNOTS_PER_FRAME) -> _F:
    """(P (F − 1) + 1,) [s]: the Chebyshev–Lobatto points of degree P in every interval of
    the frames t (F,) [s], the frames themselves among them."""
    x = 0.5 - 0.5 * np.cos(np.pi * np.arange(P) / P)
    inner = (t[:-1, None] + np.diff(t)[:, None] * x[None, :]).ravel()
    return np.append(inner, t[-1])


def tracked(adapter: EngineAdapter, held: Held | None, t: _F, Q: _F,
            forces: Sequence[ExternalForce], table: Table | None) -> Tracked:
    """The tracked state and the controls (module docstring) at the knots of the frames t
    (F,) [s] of the coordinates Q (F, nq)."""
    tk = knots(t)
    sp = dynamics.spline(t, Q)
    Qk, Vs, As = sp(tk), sp(tk, 1), sp(tk, 2)
    loads = dynamics.AppliedLoads.at(forces, table, tk) if table is not None else None
    V, tau, ext = np.empty_like(Vs), np.empty_like(Vs), np.empty_like(Vs)
    for k in range(tk.size):
        if held is not None:
            held.hold(Qk[k])
        tau_id, ext[k], V[k], _ = dynamics.state_forces(adapter, held, Qk[k], Vs[k], As[k],
                                                        loads, k)
        tau[k] = tau_id + ext[k]
    return Tracked(tk, Qk, V, tau, ext)


def engines_here() -> list[str]:
    """The default engines available here that compute in double precision."""
    out = []
    for e in registry.default_names():
        if registry.probe(e).available and not precision_class(registry.adapter_class(e)):
            out.append(e)
    return out


def _candidate(model: PreparedModel, tr: Tracked, a: int, b: int, what: str) -> Candidate:
    """Knots a … b of the tracked motion, started from its state at knot a."""
    return from_arrays(model, tr.Q[a], tr.V[a], tr.t[a:b + 1], tr.tau[a:b + 1],
                       f"lobatto{KNOTS_PER_FRAME}",
                       provenance={"producer": "harness track", "status": "tracked",
                                   "notes": what})


def horizon(model: PreparedModel, tr: Tracked, engines: Sequence[str],
            say: Callable[[str], None]) -> tuple[float, dict[str, float], float]:
    """(H [s], {engine: its window [s]}, the span measured over [s]): the whole window
    replayed in horizon mode in every engine; H the shortest window (the whole window when
    no engine's twin left the band). An engine whose run raised (a replay that diverged to
    non-finite states) has no window; when every engine's run raised, the horizon is
    measured again over the first half of the window, and so on down to one frame interval
    (H is then at most the span replayed: a bound from below of the horizon, never the
    whole window)."""
    last = tr.t.size - 1
    while True:
        span = f"the first {tr.t[last] - tr.t[0]:.4f} s" if last < tr.t.size - 1 else \
            "the whole window"
        cand = _candidate(model, tr, 0, last, f"{span}, horizon mode")
        case = Case("whole", cand, "horizon", METHOD, native=False)
        res = _run_quietly([case], engines, say)
        run = replay_stage.harness_run(case)
        win = {}
        for e in engines:
            if array_key("whole", run, e, "x") in res.arrays:
                n = window_length(res.arrays, "whole", run, e)
                win[e] = float(tr.t[n - 1] - tr.t[0])
        if win or last <= KNOTS_PER_FRAME:
            break
        say(f"replay: every engine's horizon run over {span} raised; measured again over "
            "its first half")
        # whole frame intervals: a candidate's lobatto controls take P knots per interval
        last = max(KNOTS_PER_FRAME, (last // 2) // KNOTS_PER_FRAME * KNOTS_PER_FRAME)
    measured = float(tr.t[last] - tr.t[0])
    return (min(win.values()) if win else measured), win, measured


def _run_quietly(cases: Sequence[Case], engines: Sequence[str],
                 say: Callable[[str], None]) -> Any:
    """The replay stage's run of ``cases`` in ``engines`` with NumPy's overflow and
    invalid-value warnings off: an open-loop run may diverge (an expected outcome here,
    the integrator raises at the first non-finite state and the stage records it), which
    is no warning for the user's terminal."""
    with np.errstate(over="ignore", invalid="ignore"):
        return replay_stage.run(cases, engines, progress=say)


def _deviation(X: _F, T: _F, iq: NDArray[np.int_], scale: _F, rotational: NDArray[np.bool_],
               names: Sequence[str]) -> dict[str, Any]:
    """Largest |replayed − tracked| over knots of the OpenSim coordinates (rad, m) and the
    worst coordinate; X, T (r, nq) canonical."""
    d = np.abs(X[:, iq] - T[:, iq]) / scale
    worst = np.max(d, axis=0)
    k = int(np.argmax(worst))
    return {"q_dev_max_rad": float(np.max(worst[rotational], initial=0.0)),
            "q_dev_max_m": float(np.max(worst[~rotational], initial=0.0)),
            "q_dev_max": float(worst[k]), "worst_coordinate": names[k]}


def score_segment(res: Any, case: Case, a: int, b: int, tr: Tracked,
                  coords: Any) -> dict[str, Any]:
    """One segment's figures: per engine its deviation from the tracked q and whether it
    passed (deviation within bound, its records passed); per engine pair the largest
    state difference [rad | m | rad/s | m/s] and the record's status."""
    bound = lookup("track", "replay_vs_tracked").atol
    run = replay_stage.harness_run(case)
    mine = [r for r in res.records if r.id.startswith(case.name + "/")
            and r.status != "not_provided"]
    out: dict[str, Any] = {"case": case.name, "knots": [a, b],
                           "t_s": [float(tr.t[a]), float(tr.t[b])], "engines": {},
                           "pairs": {}, "records": segments.record_counts(res.records,
                                                                           case.name)}
    for r in mine:
        if r.quantity.startswith("trajectory"):
            out["pairs"][f"{r.engine_a}~{r.engine_b}"] = {"max_abs": r.max_abs,
                                                          "status": r.status}
    nq = tr.Q.shape[1]
    for e in case_engines(res, case.name, run):
        X = res.arrays[array_key(case.name, run, e, "x")][:, :nq]
        dev = _deviation(X, tr.Q[a:b + 1], coords.iq, coords.scale, coords.rotational,
                         coords.names)
        own = [r for r in mine if e in (r.engine_a, r.engine_b)]
        dev["records_passed"] = bool(own) and all(r.status == "passed" for r in own)
        dev["passed"] = dev["records_passed"] and dev["q_dev_max"] <= bound
        out["engines"][e] = dev
    return out


def case_engines(res: Any, name: str, run: str) -> list[str]:
    """The engines whose run of case ``name`` produced a trajectory."""
    return [e for e in res.info["cases"].get(name, {}).get("engines", [])
            if array_key(name, run, e, "x") in res.arrays]


def replay(spec_model: PreparedModel, adapter: EngineAdapter, held: Held | None,
           coords: Any, t: _F, Q: _F, forces: Sequence[ExternalForce],
           table: Table | None, say: Callable[[str], None]) -> dict[str, Any]:
    """The replay (module docstring) of the tracked coordinates Q (F, nq) at the frames t
    (F,) [s]: summary.json's ``replay`` section, plus ``series`` (the knots, the tracked
    and each engine's replayed worst coordinate) for the report. ``available`` False with
    a reason when no engine can replay."""
    engines = engines_here()
    if not engines:
        return {"available": False, "reason": NOT_RUN_NO_ENGINE}
    tr = tracked(adapter, held, t, Q, forces, table)
    say(f"replay: horizon over the whole window in {', '.join(engines)}")
    H, windows, measured = horizon(spec_model, tr, engines, say)
    segs, series = replay_segments(spec_model, tr, H, engines, coords, say)
    passed = [e for e in engines if all(s["engines"].get(e, {}).get("passed") for s in segs)]
    return {"available": True, "engines": engines, "engines_passed": passed,
            "method": METHOD.settings(), "knots_per_frame": KNOTS_PER_FRAME,
            "horizon_s": H, "engine_windows_s": windows, "horizon_measured_over_s": measured,
            "bound_rad_or_m": lookup("track", "replay_vs_tracked").atol,
            "segments": segs, "window_s": scored_window(segs, engines), "series": series}


def replay_segments(spec_model: PreparedModel, tr: Tracked, H: float,
                    engines: Sequence[str], coords: Any, say: Callable[[str], None]
                    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(per segment its figures (``score_segment``), the report's series): the knots of
    ``tr`` tiled into segments no longer than H [s] (boundaries on the frames), each
    replayed in every one of ``engines`` from the tracked state at its first knot."""
    tiles = segments.tile(tr.t, KNOTS_PER_FRAME, H)
    cases = [Case(segments.case_name(i, len(tiles), tr.t, a, b),
                  _candidate(spec_model, tr, a, b, f"segment {i + 1} of {len(tiles)}"),
                  "agreement", METHOD, native=False) for i, (a, b) in enumerate(tiles)]
    say(f"replay: {len(tiles)} segments of at most {H:.4f} s")
    res = _run_quietly(cases, engines, say)
    segs = [score_segment(res, c, a, b, tr, coords) | {"index": i}
            for i, (c, (a, b)) in enumerate(zip(cases, tiles))]
    return segs, _series(tr, res, cases, tiles, coords, segs)


def scored_window(segs: Sequence[dict[str, Any]], engines: Sequence[str]
                  ) -> list[float] | None:
    """[start, end] [s] of the segments replayed in every engine, from the first on while
    they follow each other (None: none)."""
    end = None
    for s in segs:
        if not all(e in s["engines"] for e in engines) or (
                end is not None and s["t_s"][0] != end[1]):
            break
        end = [segs[0]["t_s"][0], s["t_s"][1]]
    return end


def _series(tr: Tracked, res: Any, cases: Sequence[Case], tiles: Sequence[tuple[int, int]],
            coords: Any, segs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The worst coordinate (the largest deviation of any engine in any segment): the
    tracked values at every knot and each engine's replayed values per segment (NaN
    between segments), in OpenSim's units (rad | m)."""
    worst = max(((d["q_dev_max"], d["worst_coordinate"]) for s in segs
                 for d in s["engines"].values()), default=(0.0, coords.names[0]))[1]
    j = coords.names.index(worst)
    iq, sc = int(coords.iq[j]), float(coords.scale[j])
    out: dict[str, Any] = {"coordinate": worst, "rotational": bool(coords.rotational[j]),
                           "t": tr.t, "tracked": tr.Q[:, iq] / sc, "engines": {}}
    for c, (a, b) in zip(cases, tiles):
        run = replay_stage.harness_run(c)
        for e in case_engines(res, c.name, run):
            y = out["engines"].setdefault(e, ([], []))
            X = res.arrays[array_key(c.name, run, e, "x")]
            y[0].extend(list(tr.t[a:b + 1]) + [float("nan")])
            y[1].extend(list(X[:, iq] / sc) + [float("nan")])
    return out


def summary_keys(rep: dict[str, Any]) -> dict[str, Any]:
    """summary.json's keys of the replay ``rep`` (``replay``'s section without its series):
    ``engines_replayed`` (every segment passed), ``replay_window_s`` [start, end] s scored
    in every engine, ``replay`` the figures; None each when it was not run."""
    if not rep.get("available"):
        return {"engines_replayed": None, "replay_window_s": None, "replay": None}
    return {"engines_replayed": list(rep["engines_passed"]),
            "replay_window_s": rep["window_s"], "replay": _finite(rep)}


def _finite(x: Any) -> Any:
    """``x`` with every non-finite float None (summary.json is strict JSON)."""
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    if isinstance(x, float) and not np.isfinite(x):
        return None
    return x


def check(rep: dict[str, Any]) -> dict[str, Any]:
    """The replay's row of the checks table ({name, value, target, ok, why}): met when
    every engine passed every segment and the segments cover the whole window; its name
    says what it was scored over."""
    segs = rep["segments"]
    w = rep["window_s"]
    whole = [segs[0]["t_s"][0], segs[-1]["t_s"][1]]
    worst = max((d["q_dev_max"] for s in segs for d in s["engines"].values()), default=None)
    span = f"t = {w[0]:.4f}–{w[1]:.4f} s" if w else "no segment in every engine"
    ok = (set(rep["engines_passed"]) == set(rep["engines"]) and w == whole
          and worst is not None)
    failed = [e for e in rep["engines"] if e not in rep["engines_passed"]]
    return {"name": f"replay in every engine against the tracked q, {span} in {len(segs)} "
                    f"segment(s) of at most {rep['horizon_s']:.4f} s, worst deviation "
                    "[rad | m]",
            "value": worst,
            "target": f"≤ {rep['bound_rad_or_m']:g} rad | m per segment, and every replay "
                      f"record (engine pairs, refinement, energy) passed, in "
                      f"{', '.join(rep['engines'])}",
            "ok": ok, "why": "" if ok else f"not passed in {', '.join(failed) or 'some segment'}"}
