"""Stage 5 — open-loop replay of a candidate in every engine (engine-blind).

Dimension legend: N knots of the candidate's time grid; nq, nv canonical; k frames
(every body and named frame of the model); m markers; K levels of a convergence sweep.

A *case* is one candidate replayed one way:

* ``agreement`` — every engine integrates the candidate with the same harness integrator
  (harness/model/integrators.py); every pair of engines is compared pointwise over the whole
  grid (``trajectory`` rows). Engines with stepping of their own (``native_rollout`` in
  engines/<engine>.py) are replayed with it too and compared with their own harness
  reference, the refined harness run (``native`` rows); an engine without one gets a
  ``not_provided`` row. Energy balance rows: E(t) − E(t0) = ∫τᵀv − ∫vᵀDv.
* ``horizon`` — for sensitive (chaotic) motions: as ``agreement``, but a pair is scored only
  over the *predictability window*: the knots before a twin run of the same engine, whose
  v0 differs by the twin perturbation of the tolerance table (the size of difference the
  stage-2 parity claim cannot exclude), leaves the agreement band. The agreement horizon
  (first knot where the pair leaves the band) and the growth rate of log-error (a finite-
  time Lyapunov estimate) are measured over the whole run and reported; beyond the window
  no verdict is claimed.
* ``convergence`` — one integrator at K steps h, h/2, ... in every engine; the state error
  against an adaptive DOP853 reference at the tightest tolerance gives the observed order
  (``convergence_order`` rows, scored against the method's theoretical order). Energy and
  angular-momentum drift against h, and error against wall time, are reported.

Refinement gate: every run is repeated refined (dt halved, or rtol/atol tightened 100×).
A run whose trajectory moves by more than the ``replay/refinement`` tolerance gets an
``unconverged`` refinement row, and every row computed from it is ``unconverged`` too
(neither passed nor failed; ``qualify`` fails on it). For a convergence row the refined
quantity is the order of the next finer pair of levels.

Frames, markers, energy and momentum of *every* engine's trajectory are evaluated with one
observation map: the first engine of the run that provides frame_pose and mass_matrix
(named in the manifest), so they measure trajectory divergence, not kinematics (stage 1
checks that). Every verdict is recomputed from the stored arrays by ``recompute_record``
(called by ``harness verify``).
"""
from __future__ import annotations

import itertools
import math
import re
import time
from dataclasses import dataclass, field

import numpy as np

from harness.core.conventions import canonical_difference, manifold_maps
from harness.core.errors import BadInput, EngineUnavailable, ModelRejected
from harness.core.records import Record, compare
from harness.core.tolerances import Tolerance, lookup
from harness.model import registry
from harness.model.candidate import Candidate, Controls, Marker, from_arrays
from harness.model.integrators import ORDERS, Method, rollout
from harness.model.protocol import HasNativeRollout

NAME = "replay"
# tolerance-table entries used by the analysis rather than as a record's own tolerance
THRESHOLDS = ("twin_perturbation", "growth_window", "growth_saturation", "order_refinement")
MODES = ("agreement", "horizon", "convergence")
NATIVE = "native"
REFERENCE_RTOL = 1e-13   # DOP853 reference of a convergence sweep (SciPy's floor is ~2e-14)
REFERENCE_ATOL = 1e-13


# ----- cases -----------------------------------------------------------------------------
@dataclass
class Case:
    """One candidate replayed one way (N knots; nq, nv of the candidate's model).
    ``name`` prefixes its arrays and record ids; ``method`` is the harness integrator of an
    agreement/horizon case, ``sweep`` the (base Method, levels) of a convergence case."""

    name: str
    candidate: Candidate
    mode: str = "agreement"
    method: Method | None = None           # agreement / horizon
    native: bool = True                    # also each engine's own stepping
    native_settings: dict = field(default_factory=dict)  # engine -> settings (else default)
    sweep: tuple = ()                      # convergence: ((Method, levels), ...)

    def __post_init__(self):
        if not _CASE_NAME.match(self.name):
            raise ValueError(f"case name {self.name!r}: use safe_case_name()")
        if self.mode not in MODES:
            raise BadInput("--score", f"must be one of {', '.join(MODES)}")
        if self.mode != "convergence" and self.method is None:
            raise BadInput("--method", "a replay needs an integrator")
        bad = [c for c in self.candidate.contact_schedule if c["mode"] != "free"]
        if bad:
            raise BadInput(self.candidate.path or self.name,
                           f"contact_schedule has {bad[0]['mode']} intervals: replay with "
                           "contact belongs to stage 4 and is not available for "
                           "unconstrained models")


_CASE_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")


def safe_case_name(name: str) -> str:
    """A case name usable in array keys and record ids ('/' separates their parts)."""
    out = re.sub(r"[^A-Za-z0-9_.\-]", "_", name).strip("._") or "case"
    return out if out != NAME else "case"


@dataclass
class ReplayResult:
    """Stage-5 output: records (stage 'replay'), the arrays they are computed from (keys
    ``replay/<case>/...``), the manifest's ``replay`` section (``info``) and the wall times
    of the runs (``timings``: {case: {run: {engine: [s, ...]}}}). Wall times differ from run
    to run, so they are not evidence: they go to ``timings.json`` beside the bundle, outside
    the sealed manifest, and only feed the speed–accuracy plot."""

    records: list
    arrays: dict
    info: dict
    timings: dict = field(default_factory=dict)


def _key(case, *parts) -> str:
    return "/".join(("replay", case, *parts))


def _rid(case, fixture, run, quantity, who) -> str:
    return f"{case}/{NAME}/{run}/{quantity}/{who}"


# ----- pointwise divergence (shared with verify and the report) -----------------------------
def sample_errors(xa, xb, tol: Tolerance):
    """(err (S,), bound (S,)): max |xa − xb| per sample and the agreement band
    atol + rtol·max(max|xa|, max|xb|) — the arithmetic of harness.core.records.measure."""
    xa, xb = np.asarray(xa, dtype=float), np.asarray(xb, dtype=float)
    S = xa.shape[0]
    err = np.abs(xa - xb).reshape(S, -1).max(axis=1)
    scale = np.maximum(np.abs(xa).reshape(S, -1).max(axis=1), np.abs(xb).reshape(S, -1).max(axis=1))
    err = np.where(np.isfinite(err), err, np.inf)
    return err, tol.atol + tol.rtol * scale


def first_exceed(xa, xb, tol: Tolerance):
    """Index of the first sample outside the agreement band, or None."""
    err, bound = sample_errors(xa, xb, tol)
    out = np.nonzero(err > bound)[0]
    return int(out[0]) if out.size else None


def growth_rate(t, err):
    """(λ [1/s], samples used): least-squares slope of ln(error) over the samples inside
    the growth window of the tolerance table (above round-off, below saturation) —
    a finite-time Lyapunov estimate. (None, n) with fewer than 5 samples."""
    lo, hi = lookup(NAME, "growth_window").atol, lookup(NAME, "growth_saturation").atol
    t, err = np.asarray(t, dtype=float), np.asarray(err, dtype=float)
    sel = (err > lo) & (err < hi)
    n = int(sel.sum())
    if n < 5:
        return None, n
    return float(np.polyfit(t[sel], np.log(err[sel]), 1)[0]), n


def coordinate_errors(layout, xa, xb):
    """(N, 2 nv) |error| per coordinate: q as the tangent vector q_b ⊖ q_a (m, rad), then
    v (m/s, rad/s)."""
    mp = manifold_maps(layout)
    nq = layout.nq
    dq = np.stack([canonical_difference(mp, a[:nq], b[:nq]) for a, b in zip(xa, xb)])
    return np.abs(np.hstack([dq, xb[:, nq:] - xa[:, nq:]]))


def coordinate_labels(layout) -> list:
    lab = []
    for s in layout.slots:
        if s.type == "free":
            lab += [f"{s.name}.{c}" for c in ("ρx", "ρy", "ρz", "φx", "φy", "φz")]
        else:
            lab.append(s.name)
    return [f"q:{n}" for n in lab] + [f"v:{n}" for n in lab]


def frame_errors(Fa, Fb):
    """(position error (N, k) [m], rotation error (N, k) [rad]) of pose arrays (N, k, 12).
    The angle of R_aᵀ R_b is atan2(|skew part|/2, (trace − 1)/2): accurate near 0 and π."""
    dp = np.linalg.norm(Fa[..., :3] - Fb[..., :3], axis=-1)
    Ra = Fa[..., 3:].reshape(*Fa.shape[:-1], 3, 3)
    Rb = Fb[..., 3:].reshape(*Fb.shape[:-1], 3, 3)
    M = np.einsum("...ji,...jk->...ik", Ra, Rb)
    w = np.stack([M[..., 2, 1] - M[..., 1, 2], M[..., 0, 2] - M[..., 2, 0],
                  M[..., 1, 0] - M[..., 0, 1]], axis=-1)
    ang = np.arctan2(0.5 * np.linalg.norm(w, axis=-1),
                     0.5 * (np.trace(M, axis1=-2, axis2=-1) - 1.0))
    return dp, ang


def first_time(t, e, thr):
    idx = np.nonzero(np.asarray(e) > thr)[0]
    return float(t[idx[0]]) if idx.size else None


# ----- observation map ------------------------------------------------------------------------
class Observer:
    """Frames, markers, energy and momentum of trajectories, evaluated with one adapter.

    k frames (model.frames: every body, then named frames), m markers. Energy E = ½ vᵀMv −
    Σ_b m_b g·c_b [J] (M from the adapter, armature included; body coms c_b from the
    model). Angular momentum about the system com, world axes [kg·m²/s] (free root only):
    L = R n_B + (p − c) × R f_B with (f_B, n_B) = (M v)[root]."""

    def __init__(self, adapter, model, markers=()):
        self.a, self.model = adapter, model
        self.frames = list(model.frames)
        bodies = model.spec.bodies
        self._bodies = [self.frames.index(b.name) for b in bodies]
        self._mass = np.array([b.mass for b in bodies])
        self._com = np.array([b.com for b in bodies], dtype=float)
        self._g = np.array(model.spec.gravity, dtype=float)
        self.markers = list(markers)
        self._mk = [(self.frames.index(m.frame), np.array(m.offset)) for m in self.markers]
        self._free = model.layout.free_slot()

    def poses(self, Q):
        """(N, k, 12) [p_WF, R_WF row-major] of every frame."""
        return np.stack([self.a.frame_poses(q, self.frames) for q in Q])

    def marker_positions(self, P):
        """(N, m, 3) [m] from poses (N, k, 12)."""
        if not self._mk:
            return np.zeros((P.shape[0], 0, 3))
        out = np.empty((P.shape[0], len(self._mk), 3))
        for j, (fi, off) in enumerate(self._mk):
            R = P[:, fi, 3:].reshape(-1, 3, 3)
            out[:, j] = P[:, fi, :3] + R @ off
        return out

    def _coms(self, P):
        R = P[:, self._bodies, 3:].reshape(P.shape[0], len(self._bodies), 3, 3)
        return P[:, self._bodies, :3] + np.einsum("nbij,bj->nbi", R, self._com)

    def energy(self, Q, V, P):
        """(N,) [J] kinetic + gravitational energy."""
        kin = np.array([0.5 * v @ self.a.mass_matrix(q) @ v for q, v in zip(Q, V)])
        pot = -np.einsum("nbi,i,b->n", self._coms(P), self._g, self._mass)
        return kin + pot

    def angular_momentum(self, Q, V, P):
        """(N, 3) [kg·m²/s] about the system com in world axes, or None without a free root."""
        if self._free is None:
            return None
        iv = self._free.iv
        c = np.einsum("nbi,b->ni", self._coms(P), self._mass) / self._mass.sum()
        out = np.empty((Q.shape[0], 3))
        for i, (q, v) in enumerate(zip(Q, V)):
            h = self.a.mass_matrix(q)[iv:iv + 6] @ v
            R = P[i, self.frames.index(self.model.spec.root), 3:].reshape(3, 3)
            fW = R @ h[0:3]
            out[i] = R @ h[3:6] + np.cross(q[0:3] - c[i], fW)
        return out


def pick_observer(adapters: dict):
    for e, a in adapters.items():
        if "frame_pose" in a.provides and "mass_matrix" in a.provides:
            return e
    raise EngineUnavailable("observer", "no engine of the run provides frame poses and a "
                                        "mass matrix (needed for frames, markers and energy)")


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


def _status_from_gate(rec: Record, gates: list) -> Record:
    """Turn a passed/failed record into 'unconverged' when a gate it depends on tripped."""
    tripped = [g for g in gates if g is not None and g.status == "unconverged"]
    if rec.status in ("passed", "failed") and tripped:
        rec.status, rec.passed = "unconverged", None
        rec.reason = (rec.reason + "; " if rec.reason else "") + \
            "refinement gate tripped: " + ", ".join(g.id for g in tripped)
    return rec


def _gate(rec: Record) -> Record:
    if rec.status == "failed":
        rec.status, rec.passed = "unconverged", None
    return rec


def _blocked(records):
    """({engine: reason}, {(a, b): reason}) from earlier stages (the runner's gating rule)."""
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


def run(cases, engines, earlier_records=(), progress=None) -> ReplayResult:
    """Replay every case with every engine; records (stage 'replay'), arrays, manifest info."""
    records, arrays, info = [], {}, {"cases": {}}
    be, bp = _blocked(earlier_records)
    classes = {e: registry.adapter_class(e) for e in engines}
    for case in cases:
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
            records.append(Record(id=_rid(case.name, fx, "load", "load", e), stage=NAME,
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
        arrays[_key(case.name, "t")] = t.copy()
        arrays[_key(case.name, "labels")] = np.array([f"t = {x:.4f} s" for x in t])
        arrays[_key(case.name, "in", "q0")] = cand.q0.copy()
        arrays[_key(case.name, "in", "v0")] = cand.v0.copy()
        arrays[_key(case.name, "in", "tau")] = cand.tau.copy()
        cinfo = {"fixture": fx, "mode": case.mode, "observer": obs_engine,
                 "frames": list(observer.frames),
                 "layout": [[s.name, s.type, s.iq, s.nq, s.iv, s.nv]
                            for s in cand.model.layout.slots],
                 "candidate": cand.summary(), "engines": list(adapters), "runs": {},
                 "thresholds": {f"{NAME}/{q}": _tol_json(q) for q in THRESHOLDS}}
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


CASE_KEYS = {"fixture", "mode", "observer", "frames", "layout", "candidate", "engines",
             "runs", "thresholds"}


def manifest_section_problem(section) -> str:
    """'' if ``section`` (a bundle manifest's ``replay`` entry) has the right shape, else the
    problem (strict: unknown or missing keys are problems)."""
    if set(section) != {"cases"} or not isinstance(section["cases"], dict):
        return "must be {\"cases\": {...}}"
    for name, c in section["cases"].items():
        if not isinstance(c, dict) or set(c) != CASE_KEYS:
            got = sorted(c) if isinstance(c, dict) else type(c).__name__
            return f"case {name!r}: keys {got}, expected {sorted(CASE_KEYS)}"
        if c["mode"] not in MODES:
            return f"case {name!r}: unknown mode {c['mode']!r}"
        if not isinstance(c["runs"], dict) or not isinstance(c["engines"], list):
            return f"case {name!r}: runs must be an object and engines a list"
    return ""


def _tol_json(q):
    t = lookup(NAME, q)
    return {"atol": t.atol, "rtol": t.rtol, "reason": t.reason}


def _run_replay(case, adapters, blocked, bp, observer, records, arrays, cinfo, say):
    cand, fx, name = case.candidate, case.candidate.model.name, case.name
    lay = cand.model.layout
    controls = cand.controls()
    D = lay.damping
    m = case.method
    run = m.label
    traj_tol = lookup(NAME, "trajectory")
    N = cand.t.size
    cinfo["runs"][run] = {"kind": "harness", "settings": m.settings(),
                          "refined": m.refined().settings(),
                          "statement": f"harness {m.name} over each engine's forward_dynamics "
                                       f"(canonical ⊕ for configurations; identical "
                                       f"arithmetic for every engine)"}
    gates, ok = {}, []
    for e, a in adapters.items():
        if e in blocked:
            continue
        say(f"replay {name}: {e} {run}")
        pre = _key(name, run, e)
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
            ref = rollout(a, cand.q0, cand.v0, _truncate(controls, max(n_w, 2)),
                          m.refined(), D)
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
            records.append(Record(id=_rid(name, fx, run, "run", e), stage=NAME, fixture=fx,
                                  quantity="run", engine_a=e, engine_b="", status="error",
                                  reason=f"{type(err).__name__}: {err}"))
            for k in [k for k in arrays if k.startswith(pre + "/")]:
                del arrays[k]
            continue
        ok.append(e)
        gates[e] = recompute_record(_stub(name, fx, run, "refinement", e, pre + "/x",
                                          pre + "/x_refined"), arrays, {})
        records.append(gates[e])
        records.append(recompute_record(_stub(name, fx, run, "energy_balance", e,
                                              pre + "/energy", pre + "/work"),
                                        arrays, {gates[e].id: gates[e]}))
    for e in adapters:
        if e in blocked:
            for q in ("refinement", "energy_balance"):
                records.append(Record(id=_rid(name, fx, run, q, e), stage=NAME, fixture=fx,
                                      quantity=q, engine_a=e, engine_b="", status="not_scored",
                                      reason=blocked[e]))
    for a, b in itertools.combinations(list(adapters), 2):
        rid = _rid(name, fx, run, "trajectory", f"{a}~{b}")
        why = blocked.get(a) or blocked.get(b) or bp.get((fx, a, b))
        if why:
            records.append(Record(id=rid, stage=NAME, fixture=fx, quantity="trajectory",
                                  engine_a=a, engine_b=b, status="not_scored", reason=why))
            continue
        if a not in ok or b not in ok:
            continue  # the error row explains it
        stub = _stub(name, fx, run, "trajectory", f"{a}~{b}", _key(name, run, a, "x"),
                     _key(name, run, b, "x"), a, b)
        records.append(recompute_record(stub, arrays, {g.id: g for g in gates.values()}))
    if case.native:
        _run_native(case, adapters, blocked, ok, gates, records, arrays, cinfo, say)


def _run_native(case, adapters, blocked, ok, gates, records, arrays, cinfo, say):
    cand, fx, name = case.candidate, case.candidate.model.name, case.name
    controls = cand.controls()
    fn = _controls_fn(controls)
    run = NATIVE
    cinfo["runs"][run] = {"kind": "native", "engines": {}}
    for e, a in adapters.items():
        rid = _rid(name, fx, run, "native", e)
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
        pre = _key(name, run, e)
        try:
            settings, statement = a.native_describe(case.native_settings.get(e))
            refined = refine_native(settings)
            say(f"replay {name}: {e} native {settings}")
            t0 = time.perf_counter()
            Q, V = a.native_rollout(cand.q0, cand.v0, cand.t, fn, settings)
            t1 = time.perf_counter()
            Qr, Vr = a.native_rollout(cand.q0, cand.v0, cand.t, fn, refined)
            t2 = time.perf_counter()
        except Exception as err:
            records.append(Record(id=rid, stage=NAME, fixture=fx, quantity="native",
                                  engine_a=e, engine_b="", status="error",
                                  reason=f"{type(err).__name__}: {err}"))
            continue
        n_w = arrays[_key(name, case.method.label, e, "x_refined")].shape[0]  # window
        arrays[pre + "/x"] = np.hstack([Q, V])
        arrays[pre + "/x_refined"] = np.hstack([Qr, Vr])[:n_w]
        cinfo["runs"][run]["engines"][e] = {"settings": settings, "refined": refined,
                                            "statement": statement,
                                            "wall_s": [t1 - t0, t2 - t1]}
        g = recompute_record(_stub(name, fx, run, "refinement", e, pre + "/x",
                                   pre + "/x_refined"), arrays, {})
        records.append(g)
        ref_gate = gates[e]
        stub = _stub(name, fx, run, "native", e, pre + "/x",
                     _key(name, case.method.label, e, "x_refined"))
        records.append(recompute_record(stub, arrays, {g.id: g, ref_gate.id: ref_gate}))


def refine_native(settings: dict) -> dict:
    """Engine-blind refinement of native settings: ``dt`` halved, or ``accuracy`` / 100."""
    out = dict(settings)
    if "dt" in out:
        out["dt"] = out["dt"] * 0.5
    elif "accuracy" in out:
        out["accuracy"] = out["accuracy"] * 0.01
    else:
        raise ValueError(f"native settings {settings} have neither dt nor accuracy to refine")
    return out


def _stub(case, fx, run, quantity, who, key_a, key_b, a=None, b=None):
    """What to compute (ids and array keys); recompute_record makes the record itself.
    Its placeholder status is "error", so a stub that escaped would fail, never pass."""
    return Record(id=_rid(case, fx, run, quantity, who), stage=NAME, fixture=fx,
                  quantity=quantity, engine_a=a or who, engine_b=b or "", status="error",
                  reason="not computed", key_a=key_a, key_b=key_b,
                  key_labels=_key(case, "labels"))


# ----- convergence sweeps ---------------------------------------------------------------------
def _run_convergence(case, adapters, blocked, observer, records, arrays, cinfo, say):
    cand, fx, name = case.candidate, case.candidate.model.name, case.name
    controls = cand.controls()
    D = cand.model.layout.damping
    ref_m = Method("dop853", rtol=REFERENCE_RTOL, atol=REFERENCE_ATOL)
    for e, a in adapters.items():
        if e in blocked:
            for base, _ in case.sweep:
                records.append(Record(id=_rid(name, fx, base.name, "convergence_order", e),
                                      stage=NAME, fixture=fx, quantity="convergence_order",
                                      engine_a=e, engine_b="", status="not_scored",
                                      reason=blocked[e]))
            continue
        say(f"replay {name}: {e} reference {ref_m.label}")
        try:
            ref = rollout(a, cand.q0, cand.v0, controls, ref_m, D)
        except Exception as err:
            records.append(Record(id=_rid(name, fx, "reference", "run", e), stage=NAME,
                                  fixture=fx, quantity="run", engine_a=e, engine_b="",
                                  status="error", reason=f"{type(err).__name__}: {err}"))
            continue
        arrays[_key(name, "conv", e, "x_ref")] = ref.x
        for base, levels in case.sweep:
            pre = _key(name, "conv", e, base.name)
            cinfo["runs"].setdefault(base.name, {"kind": "convergence",
                                                 "settings": base.settings(),
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
                    m = m.refined()
                arrays[pre + "/h"] = np.array(hs)
                cinfo["runs"][base.name].setdefault("wall_s", {})[e] = walls
                arrays[pre + "/energy"] = np.stack(energies)
                if moms:
                    arrays[pre + "/momentum"] = np.stack(moms)
            except Exception as err:
                records.append(Record(id=_rid(name, fx, base.name, "run", e), stage=NAME,
                                      fixture=fx, quantity="run", engine_a=e, engine_b="",
                                      status="error", reason=f"{type(err).__name__}: {err}"))
                continue
            if base.name != "dop853":  # an adaptive method has no step to refine
                records.append(recompute_record(_stub(name, fx, base.name, "convergence_order",
                                                      e, pre + "/h",
                                                      _key(name, "conv", e, "x_ref")),
                                                arrays, {}))


def actual_step(t, method: Method) -> float:
    """The step [s] a fixed-step method takes on a uniform grid t (as integrators.rollout
    does: ceil(Δt / dt) equal steps per interval)."""
    dt_grid = float(t[1] - t[0])
    if not np.allclose(np.diff(t), dt_grid, rtol=1e-9, atol=0):
        raise BadInput("convergence", "a convergence sweep needs a uniform time grid")
    return dt_grid / max(1, int(math.ceil(dt_grid / method.dt - 1e-9)))


def sweep_errors(arrays, pre, ref_key):
    """err (K,) = max over knots and coordinates of |x_j − x_ref| for each level j."""
    ref = arrays[ref_key]
    K = arrays[pre + "/h"].size
    return np.array([np.abs(arrays[f"{pre}/x_{j}"] - ref).max() for j in range(K)])


def observed_orders(h, err):
    """(K − 1,) log(err_j / err_{j+1}) / log(h_j / h_{j+1})."""
    h, err = np.asarray(h, dtype=float), np.asarray(err, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(err[:-1] / err[1:]) / np.log(h[:-1] / h[1:])


# ----- windows and recomputation -----------------------------------------------------------------
def window_length(arrays, case, run, engine) -> int:
    """Knots scored for one engine's run: all N, or (horizon mode) the knots before the twin
    run leaves the agreement band."""
    N = arrays[_key(case, "t")].size
    twin = arrays.get(_key(case, run, engine, "x_twin"))
    if twin is None:
        return N
    base = arrays[_key(case, run, engine, "x")]
    idx = first_exceed(twin, base[:twin.shape[0]], lookup(NAME, "trajectory"))
    return N if idx is None else max(int(idx), 1)


def _parse(r: Record):
    """(case, run, who) from a replay record id."""
    head, tail = r.id.split(f"/{NAME}/", 1)
    run, _, who = tail.split("/", 2)
    return head, run, who


def recompute_record(r: Record, arrays: dict, records_by_id: dict) -> Record:
    """The replay record ``r`` computed again from the arrays (its status included).

    Used when the record is made and by ``harness verify``; raises KeyError/ValueError if
    an array is missing or inconsistent."""
    case, run, who = _parse(r)
    labels_key = _key(case, "labels")
    labels = arrays[labels_key]
    q = r.quantity
    # a stored record is recomputed with its own tolerance (verify checks it against the
    # table); a new one takes the table's
    tol = lookup(NAME, q) if r.atol is None else Tolerance(r.atol, r.rtol, "")
    args = dict(rid=r.id, stage=NAME, fixture=r.fixture, quantity=q,
                engine_a=r.engine_a, engine_b=r.engine_b, tol=tol, key_a=r.key_a,
                key_b=r.key_b, key_labels=labels_key)
    if q == "refinement":
        b = arrays[r.key_b]
        n = b.shape[0]
        if run != NATIVE and n != window_length(arrays, case, run, who):
            raise ValueError(f"refined run of {who} has {n} knots, the window has "
                             f"{window_length(arrays, case, run, who)}")
        out = compare(a=arrays[r.key_a][:n], b=b, labels=labels[:n], **args)
        out = _gate(out)
        out.reason = _join(out.reason, f"moved by {out.max_abs:.2e} when refined"
                           if out.max_abs is not None else "")
        return out
    if q == "trajectory":
        a_, b_ = r.engine_a, r.engine_b
        n = min(window_length(arrays, case, run, a_), window_length(arrays, case, run, b_))
        xa, xb = arrays[r.key_a], arrays[r.key_b]
        out = compare(a=xa[:n], b=xb[:n], labels=labels[:n], **args)
        t = arrays[_key(case, "t")]
        err, bound = sample_errors(xa, xb, tol)
        hz = np.nonzero(err > bound)[0]
        lam, used = growth_rate(t, err)
        parts = []
        if n < t.size:
            parts.append(f"scored over the predictability window t < {t[n]:.3f} s "
                         f"({n} of {t.size} knots)")
        parts.append(f"agreement horizon {t[hz[0]]:.3f} s" if hz.size else
                     f"no horizon within {t[-1] - t[0]:.3f} s")
        if lam is not None:
            parts.append(f"log-error growth {lam:.3g} /s over {used} knots")
        out.reason = _join(out.reason, "; ".join(parts))
        gates = [records_by_id.get(_rid(case, r.fixture, run, "refinement", e))
                 for e in (a_, b_)]
        return _status_from_gate(out, gates)
    if q == "native":
        b = arrays[r.key_b]  # the refined harness run: as long as its window
        n = b.shape[0]
        out = compare(a=arrays[r.key_a][:n], b=b, labels=labels[:n], **args)
        ref_run = r.key_b.split("/")[2]
        out.reason = _join(out.reason, f"against {who}'s own {ref_run} refined harness run")
        gates = [records_by_id.get(_rid(case, r.fixture, NATIVE, "refinement", who)),
                 records_by_id.get(_rid(case, r.fixture, ref_run, "refinement", who))]
        return _status_from_gate(out, gates)
    if q == "energy_balance":
        n = window_length(arrays, case, run, who)
        E, W = arrays[r.key_a][:n], arrays[r.key_b][:n]
        out = compare(a=E - E[0], b=W[:, 0] - W[:, 1], labels=labels[:n], **args)
        out.reason = _join(out.reason, f"E(t) − E(t0) against ∫τᵀv dt − ∫vᵀDv dt; "
                           f"dissipated {W[-1, 1]:.4g} J, applied {W[-1, 0]:.4g} J")
        gates = [records_by_id.get(_rid(case, r.fixture, run, "refinement", who))]
        return _status_from_gate(out, gates)
    if q == "convergence_order":
        pre = r.key_a[:-len("/h")]
        h = arrays[r.key_a]
        err = sweep_errors(arrays, pre, r.key_b)
        p = observed_orders(h, err)
        if p.size < 2:
            raise ValueError(f"{r.id}: a convergence sweep needs at least 3 levels")
        theory = float(ORDERS[run])
        lab = np.array([f"h = {h[-2]:.3g} s"])
        out = compare(a=np.array([p[-2]]), b=np.array([theory]), labels=lab, **args)
        out.worst_label = str(lab[0])
        out.key_labels = ""
        moved = abs(p[-1] - p[-2])
        gtol = lookup(NAME, "order_refinement")
        gate_ok = bool(np.isfinite(moved) and moved <= gtol.atol)
        out.reason = (f"observed order {p[-2]:.3f} (h {h[-3]:.3g}→{h[-2]:.3g} s), refined "
                      f"{p[-1]:.3f} (h→{h[-1]:.3g} s), theory {theory:g}; state errors "
                      f"{', '.join(f'{x:.2e}' for x in err)}")
        if not gate_ok and out.status in ("passed", "failed"):
            out.status, out.passed = "unconverged", None
            out.reason += f"; the order moved by {moved:.3f} when refined (gate {gtol.atol:g})"
        return out
    raise ValueError(f"{r.id}: no recomputation rule for replay quantity {q!r}")


def _join(a, b):
    return "; ".join(x for x in (a, b) if x)


# ----- synthetic candidates -------------------------------------------------------------------
LAWS = ("pd", "zero")


def synthesize(model, law=None, duration=2.0, grid_dt=0.01, interpolation="zoh", seed=0,
               engine=None, q0=None, v0=None, created=None) -> Candidate:
    """A candidate from a known control law. N = duration/grid_dt + 1 knots.

    ``pd`` (fixed base): PD tracking of a sinusoidal reference (amplitude 0.3 rad, or 30 %
    of a prismatic joint's half range) about the rest configuration — the minimum of
    gravitational energy over the revolute joints, prismatic joints at mid-range — with
    inverse-dynamics feed-forward, τ_k = ID(q_r, q̇_r, q̈_r) + K_p (q_r − q_k) + K_d (q̇_r − q̇_k),
    K_p = ω_c² diag M(q_r(0)), K_d = 2 ω_c diag M, ω_c = 2π·2 rad/s, simulated in closed
    loop (harness RK4, dt = grid_dt/10) with zero-order hold, so the stored τ are what a
    controller applied. ``zero``: τ = 0 (free motion) from q0, v0 (seeded if not given).
    ``engine`` computes M, ID and the closed loop (default: the first available);
    ``created`` is the provenance time stamp (default: now, UTC)."""
    lay = model.layout
    if law is None:
        law = "zero" if model.spec.floating else "pd"
    if law not in LAWS:
        raise BadInput("--law", f"must be one of {', '.join(LAWS)}")
    if not (duration > 0 and grid_dt > 0 and duration / grid_dt <= 1e6):
        raise BadInput("--duration", "duration and grid step must be > 0 (at most 1e6 knots)")
    n = int(round(duration / grid_dt))
    t = np.linspace(0.0, n * grid_dt, n + 1)
    rng = np.random.default_rng(seed)
    if engine is None:
        engine = next(e for e in registry.ENGINES if registry.probe(e).available)
    a = registry.adapter_class(engine)(model)
    if law == "zero":
        q0 = lay.random_q(rng) if q0 is None else np.asarray(q0, dtype=float)
        v0 = rng.normal(size=lay.nv) if v0 is None else np.asarray(v0, dtype=float)
        tau = np.zeros((t.size, lay.nv))
        solver = {"law": "zero torque (free motion)", "engine": engine, "seed": seed}
    else:
        if model.spec.floating:
            raise BadInput("--law", "pd needs a fixed base (a free root cannot be tracked "
                                    "by joint torques); use --law zero")
        if any(s.type == "continuous" for s in lay.slots):
            raise BadInput("--law", "pd supports revolute and prismatic joints only")
        mid, amp = _rest_configuration(a, model, rng), np.zeros(lay.nv)
        for s in lay.slots:
            lo, hi = (s.lower, s.upper) if s.lower is not None else (-0.5, 0.5)
            amp[s.iv] = 0.3 if s.type == "revolute" else 0.3 * 0.5 * (hi - lo)
        freq = 0.4 + 0.1 * np.arange(lay.nv)
        phase = rng.uniform(0, 2 * np.pi, size=lay.nv)
        w = 2 * np.pi * freq

        def ref(tt):
            s_, c_ = np.sin(w * tt + phase), np.cos(w * tt + phase)
            return mid + amp * s_, amp * w * c_, -amp * w * w * s_

        qr0, vr0, _ = ref(0.0)
        wc = 2 * np.pi * 2.0
        Md = np.diag(a.mass_matrix(qr0))
        kp, kd = wc * wc * Md, 2.0 * wc * Md
        q = qr0.copy() if q0 is None else np.asarray(q0, dtype=float)
        v = vr0.copy() if v0 is None else np.asarray(v0, dtype=float)
        q0, v0 = q.copy(), v.copy()
        tau = np.zeros((t.size, lay.nv))
        sub = Method("rk4", dt=grid_dt / 10)
        for k in range(t.size):
            qr, vr, ar = ref(t[k])
            tau[k] = a.inverse_dynamics(qr, vr, ar) + kp * (qr - q) + kd * (vr - v)
            if k + 1 < t.size:
                c = Controls(t[k:k + 2], np.vstack([tau[k], tau[k]]), "zoh")
                r = rollout(a, q, v, c, sub, lay.damping)
                q, v = r.q[-1], r.v[-1]
        solver = {"law": "PD tracking of a sinusoid about the rest configuration + "
                         "inverse-dynamics feed-forward, zero-order hold", "engine": engine,
                  "seed": seed,
                  "omega_c_rad_s": wc, "closed_loop_integrator": "rk4",
                  "closed_loop_dt_s": grid_dt / 10}
        if interpolation != "zoh":
            solver["note"] = ("closed loop simulated with zero-order hold; the candidate "
                              f"declares {interpolation} interpolation of the same knots")
    markers = tuple(Marker(f"{f.name}_marker", f.name, (0.02, -0.01, 0.03))
                    for f in model.spec.frames)
    created = created or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    prov = {"producer": "harness synth", "created": created,
            "solver": solver, "status": "synthetic",
            "notes": f"synthetic candidate for {model.name}: {solver['law']}"}
    return from_arrays(model, q0, v0, t, tau, interpolation, markers, prov)


def _rest_configuration(adapter, model, rng, starts=4):
    """q (nq,) of least gravitational energy over the revolute joints (BFGS from seeded
    starts, gradient = gravity torques ID(q, 0, 0)), prismatic joints at mid-range, angles
    wrapped to (−π, π]. A reference about it keeps an open-loop replay away from the
    exponential sensitivity of an inverted chain (λ ≈ 5 /s on chain7 upright). Joint
    limits do not act in these unconstrained replays (no engine enforces them)."""
    from scipy.optimize import minimize

    lay = model.layout
    obs = Observer(adapter, model)
    rev = np.array([s.type == "revolute" for s in lay.slots])
    q = np.zeros(lay.nq)
    for s in lay.slots:
        if s.type == "prismatic" and s.lower is not None:
            q[s.iq] = 0.5 * (s.lower + s.upper)
    if not rev.any():
        return q
    zero = np.zeros(lay.nv)

    def full(x):
        qq = q.copy()
        qq[rev] = x
        return qq

    def V(x):
        qq = full(x)
        return float(obs.energy(qq[None], zero[None], obs.poses(qq[None]))[0])

    def G(x):
        return adapter.inverse_dynamics(full(x), zero, zero)[rev]

    best = None
    for _ in range(starts):
        r = minimize(V, rng.uniform(-np.pi, np.pi, size=int(rev.sum())), jac=G, method="BFGS")
        if best is None or r.fun < best.fun:
            best = r
    return full(np.angle(np.exp(1j * best.x)))


# ----- report data ---------------------------------------------------------------------------
def report_context(manifest: dict, records: list, arrays: dict, timings=None) -> list:
    """Per case: plots (inline SVG) and tables for the report's replay_section.html.j2.
    ``timings``: the bundle's timings.json (wall times), if any."""
    if not manifest.get("replay"):
        return []
    cases = merge_timings(manifest.get("replay") or {}, timings).get("cases", {})
    out = []
    for name, info in cases.items():
        recs = [r for r in records if r.stage == NAME and r.id.startswith(f"{name}/{NAME}/")]
        try:
            ctx = _case_context(name, info, recs, arrays)
        except (KeyError, ValueError, IndexError) as e:
            ctx = {"name": name, "info": info, "plots": [], "pairs": [], "runs": {}, "error":
                   f"cannot draw this case from the bundle: {type(e).__name__}: {e}"}
        out.append(ctx)
    return out


_MAX_POINTS = 400  # per plotted line: keeps the report light and quick to draw


def _thin(n):
    """Indices of at most _MAX_POINTS samples of n (first and last kept)."""
    if n <= _MAX_POINTS:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, _MAX_POINTS).round().astype(int))


def _style(ax, xlabel, title):
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.tick_params(labelsize=7)


def _case_context(name, info, recs, arrays):
    from harness.core.figures import svg_figure

    t = arrays[_key(name, "t")]
    ctx = {"name": name, "info": info, "plots": [], "pairs": [], "error": "",
           "runs": info.get("runs", {})}
    if info["mode"] == "convergence":
        ctx["plots"].append(("convergence, conservation and speed–accuracy",
                             svg_figure(lambda fig: _convergence_axes(fig, name, info, arrays),
                                        (12, 3.0))))
        return ctx
    runs = [r for r, v in info["runs"].items() if v["kind"] == "harness"]
    have = [e for e in info["engines"] if runs and _key(name, runs[0], e, "x") in arrays]
    if not have:
        return ctx
    run = runs[0]
    trel = t - t[0]
    sel = _thin(t.size)
    tol = lookup(NAME, "trajectory")
    pairs = list(itertools.combinations(have, 2))
    nv = arrays[_key(name, "in", "v0")].size
    X = {e: arrays[_key(name, run, e, "x")] for e in have}
    nq = X[have[0]].shape[1] - nv

    def draw(fig):
        ax = fig.subplots(1, 3)
        e0 = have[0]
        ax[0].plot(trel[sel], X[e0][sel, :nq], lw=0.8)
        _style(ax[0], "t − t0 [s]", f"trajectory q(t) ({e0}; the others overlap)")
        for a_, b_ in pairs:
            err, _ = sample_errors(X[a_], X[b_], tol)
            ax[1].semilogy(trel[sel], np.maximum(err[sel], 1e-17), lw=0.8, label=f"{a_}~{b_}")
        ax[1].axhline(tol.atol, color="crimson", ls="--", lw=0.8, label=f"band {tol.atol:g}")
        ends = {window_length(arrays, name, run, e) for e in have}
        for n in ends:
            if n < t.size:
                ax[1].axvline(trel[n], color="grey", ls=":", lw=0.8,
                              label="predictability window")
        ax[1].set_ylim(1e-17, None)
        ax[1].legend(fontsize=5, ncol=2)
        _style(ax[1], "t − t0 [s]", "pointwise error max|x_a − x_b|")
        E = arrays[_key(name, run, e0, "energy")]
        W = arrays[_key(name, run, e0, "work")]
        ax[2].plot(trel[sel], (E - E[0])[sel], lw=0.8, label="E − E0")
        ax[2].plot(trel[sel], (W[:, 0] - W[:, 1])[sel], lw=0.8, ls="--",
                   label="∫τᵀv − ∫vᵀDv")
        ax[2].plot(trel[sel], -W[sel, 1], lw=0.8, ls=":", label="−∫vᵀDv (dissipated)")
        res = np.abs(E - E[0] - W[:, 0] + W[:, 1]).max()
        ax[2].legend(fontsize=5)
        _style(ax[2], "t − t0 [s]", f"energy balance [J] ({e0}; max residual {res:.1e})")
    ctx["plots"].append(("trajectory, error over time (every engine pair) and energy balance",
                         svg_figure(draw, (12, 3.0))))
    layout = _layout_from_info(info)
    frame_names = info.get("frames", [])
    markers = [m["name"] for m in info["candidate"]["markers"]]
    for a_, b_ in pairs:
        xa, xb = X[a_], X[b_]
        err, bound = sample_errors(xa, xb, tol)
        lam, used = growth_rate(t, err)
        hz = np.nonzero(err > bound)[0]
        row = {"pair": f"{a_}~{b_}", "max": float(err.max()),
               "horizon": float(trel[hz[0]]) if hz.size else None,
               "growth": lam, "items": []}
        if layout is not None and layout.nq == nq:
            ce = coordinate_errors(layout, xa, xb)
            for j, lab in enumerate(coordinate_labels(layout)):
                row["items"].append((lab, float(ce[:, j].max()),
                                     first_time(trel, ce[:, j], tol.atol)))
        dp, ang = frame_errors(arrays[_key(name, run, a_, "frames")],
                               arrays[_key(name, run, b_, "frames")])
        for j in range(dp.shape[1]):
            fname = frame_names[j] if j < len(frame_names) else f"frame {j}"
            row["items"].append((f"frame {fname} position [m]", float(dp[:, j].max()),
                                 first_time(trel, dp[:, j], tol.atol)))
            row["items"].append((f"frame {fname} rotation [rad]", float(ang[:, j].max()),
                                 first_time(trel, ang[:, j], tol.atol)))
        dm = np.linalg.norm(arrays[_key(name, run, a_, "markers")] -
                            arrays[_key(name, run, b_, "markers")], axis=-1)
        for j in range(dm.shape[1]):
            lab = markers[j] if j < len(markers) else f"marker {j}"
            row["items"].append((f"marker {lab} [m]", float(dm[:, j].max()),
                                 first_time(trel, dm[:, j], tol.atol)))
        ctx["pairs"].append(row)
    return ctx


def _layout_from_info(info):
    from harness.core.conventions import JointSlot, Layout

    slots = tuple(JointSlot(n, ty, iq, nq, iv, nv) for n, ty, iq, nq, iv, nv in
                  info.get("layout", []))
    if not slots:
        return None
    return Layout(slots, sum(s.nq for s in slots), sum(s.nv for s in slots))


def _convergence_axes(fig, name, info, arrays):
    ax = fig.subplots(1, 4)
    runs = [r for r, v in info["runs"].items() if v["kind"] == "convergence"]
    for run in runs:
        for e in info["engines"]:
            pre = _key(name, "conv", e, run)
            if pre + "/h" not in arrays:
                continue
            err = sweep_errors(arrays, pre, _key(name, "conv", e, "x_ref"))
            lab = f"{run} {e}"
            wall = info["runs"][run].get("wall_s", {}).get(e)
            if wall is not None:
                ax[3].loglog(wall, err, marker="o", ms=3, lw=0.8, label=lab)
            if run == "dop853":
                continue  # no step: its tolerance sweep is on the speed-accuracy axes
            h = arrays[pre + "/h"]
            E = arrays[pre + "/energy"]
            ax[0].loglog(h, err, marker="o", ms=3, lw=0.8, label=lab)
            ax[1].loglog(h, np.abs(E - E[:, :1]).max(axis=1), marker="o", ms=3, lw=0.8)
            if pre + "/momentum" in arrays:
                L = arrays[pre + "/momentum"]
                ax[2].loglog(h, np.linalg.norm(L - L[:, :1], axis=-1).max(axis=1),
                             marker="o", ms=3, lw=0.8)
    _style(ax[0], "step h [s]", "state error vs step")
    _style(ax[1], "step h [s]", "max |E − E0| [J]")
    _style(ax[2], "step h [s]", "max |L − L0| [kg·m²/s]")
    _style(ax[3], "wall time [s]", "speed–accuracy: error vs wall time")
    ax[0].legend(fontsize=5)
    ax[3].legend(fontsize=5)


# ----- the replay checks of `harness qualify` ---------------------------------------------------
def qualify_cases(coarse: bool = False) -> list:
    """Synthetic candidates replayed by ``harness qualify`` (about 20 s on 2 cores):

    * chain7, agreement: PD-tracking candidate, 2 s, RK4 dt 1e-3 in every engine plus each
      engine's own stepping; energy balance with joint damping (dissipated work).
    * pendulum, agreement: free swing from 1 rad, 2 s: conservative energy.
    * double_pendulum, horizon: free motion from (1.5, 3.0) rad, (−4, 2) rad/s, 8 s, RK4
      dt 2e-3: chaotic (growth ≈ 2 /s), so the report shows a finite agreement horizon.
    * free_body, convergence: torque-free tumbling (ω0 = (2, −3, 1.5) rad/s) for 1 s,
      semi-implicit Euler and RK4 at three steps each against a DOP853 reference.

    ``coarse``: chain7 with RK4 at dt = 1e-2 (one step per knot), which the refinement gate
    must mark unconverged (a test of the gate; qualify then exits 1)."""
    from harness.model.prepared import prepare_fixture

    at = "when this bundle was made (manifest: created)"  # keeps the manifest reproducible
    chain = synthesize(prepare_fixture("chain7"), "pd", duration=2.0, grid_dt=0.01, seed=0,
                       created=at)
    pend = synthesize(prepare_fixture("pendulum"), "zero", duration=2.0, grid_dt=0.01,
                      q0=[1.0], v0=[0.0], created=at)
    dpend = synthesize(prepare_fixture("double_pendulum"), "zero", duration=8.0,
                       grid_dt=0.01, q0=[1.5, 3.0], v0=[-4.0, 2.0], created=at)
    free = synthesize(prepare_fixture("free_body"), "zero", duration=1.0, grid_dt=0.02,
                      q0=[0.1, -0.2, 0.3, 0.0, 0.0, 0.0, 1.0],
                      v0=[0.3, -0.2, 0.1, 2.0, -3.0, 1.5], created=at)
    sweep = ((Method("semi_implicit_euler", dt=4e-3), 3), (Method("rk4", dt=0.02), 3))
    return [Case("chain7", chain, "agreement", Method("rk4", dt=1e-2 if coarse else 1e-3)),
            Case("pendulum", pend, "agreement", Method("rk4", dt=1e-3), native=False),
            Case("double_pendulum", dpend, "horizon", Method("rk4", dt=2e-3), native=False),
            Case("free_body", free, "convergence", sweep=sweep)]
