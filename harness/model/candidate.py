"""Candidate files: what a fitter hands to the replay stage (one strict, versioned schema).

Dimension legend: N time knots; nq, nv of the model's canonical layout (harness/
conventions.py); m markers.

A candidate is two files side by side: a JSON manifest ``NAME.json`` and the arrays it
names, ``NAME.npz`` (numeric arrays only; read with ``allow_pickle=False``). The manifest:

    {
      "schema": "harness-candidate", "schema_version": 1,
      "model": {"kind": "fixture", "name": "chain7", "sha256": "<PreparedModel.digest>"}
            or {"kind": "urdf" | "mjcf", "path": "robot.urdf", "floating": false,
                "sha256": "<sha256 of the file>"},       (path relative to the manifest)
      "joints": ["j1", "j2", ...],        every moving joint of the model, by name, in
                                          the order of the coordinate blocks below
      "arrays_file": "NAME.npz",
      "arrays": {"q0": {"shape": [nq], "dtype": "float64", "sha256": "..."},
                 "v0": {... [nv]}, "t": {... [N]}, "tau": {... [N, nv]}},
      "controls": {"kind": "generalized_force",
                   "interpolation": "zoh" | "linear" | "cubic" | "lobatto<P>"},
      "parameters": {"NAME": {"value": [..], "unit": "kg", "applied": "in_model"}},
      "contact_schedule": [{"contact": "left_foot", "mode": "free" | "stick" | "slip",
                            "t_start": 0.0, "t_end": 0.3,
                            "label": "measured" | "inferred" | "assumed"}],
      "markers": [{"name": "m1", "frame": "tool", "offset": [0.0, 0.0, 0.02]}],
      "events": [{"t": 0.25, "kind": "impulse", "frame": "tool",
                  "impulse": [0.0, 0.0, 1.5], "label": "measured"}],      (optional)
      "provenance": {"producer": "...", "created": "2026-12-01T12:00:00Z",
                     "solver": {"name": "...", "tolerance": 1e-8, ...},
                     "status": "converged", "notes": "..."}
    }

Arrays, in the joints' order (each joint contributes its canonical block: free root
q = [p_WB (3) m, quat_WB x y z w (4)], v = [v_B, ω_B] body frame; continuous q = (cos θ,
sin θ), v = θ̇; revolute/prismatic one number each):

* ``q0`` (nq,) initial configuration; ``v0`` (nv,) initial velocity [rad/s, m/s];
* ``t`` (N,) time knots [s], strictly increasing, N ≥ 2;
* ``tau`` (N, nv) generalized forces at the knots [N·m, N] (body-frame wrench on a free
  root, dual to v), interpolated as the manifest says: ``zoh`` holds τ_k on
  [t_k, t_{k+1}) (τ_{N−1} is only read at t_{N−1}); ``linear`` is piecewise linear;
  ``cubic`` is SciPy's CubicSpline with ``not-a-knot`` end conditions; ``lobatto<P>``
  (P = 1 … 32, e.g. ``lobatto16``) is piecewise polynomial of degree P: the knots come in
  groups of P + 1 sharing their end knots (N − 1 divisible by P), and on group g
  [t_{gP}, t_{(g+1)P}] τ is the degree-P polynomial through its P + 1 knots (barycentric
  Lagrange form; place the knots at Chebyshev–Lobatto points for conditioning). A fitter
  whose controls are smooth between breakpoints (e.g. inverse dynamics of a spline)
  represents them to round-off this way, where samples with a cubic leave O(Δt⁴) defects.

``parameters`` are what the producer fitted; the model reference (with its hash) must
already contain them (``applied: "in_model"``) — replay lists them and applies nothing.
``contact_schedule`` intervals are validated; the replay of unconstrained models rejects
a schedule with ``stick``/``slip`` intervals (contact replay belongs to stage 4).
Markers are points fixed in a model frame (``offset`` in that frame, m).

``events`` (optional) splits the motion into phases joined by impulsive resets: an
``impulse`` event at time ``t`` [s] applies the impulse Λ (3,) [N·s], world axes, at the
origin of model frame ``frame``, so the velocity jumps by M(q)⁻¹ J(q)ᵀ Λ (J the frame's
linear-velocity Jacobian in world axes, M the mass matrix; positions do not jump). The
knot grid repeats the event time exactly once: ``t[k] == t[k+1] == t_event`` ends the
phase before the event and starts the one after it, so ``tau[k]`` is the left limit and
``tau[k+1]`` the right limit of τ there. Each phase is interpolated on its own (a
``lobatto<P>`` phase has a multiple of P intervals); a knot may repeat only at an event,
and every event needs its repeated knot strictly inside the grid. ``label`` says where
the event time comes from, as for the contact schedule.

Every problem — unknown or missing field, wrong shape, NaN/inf, an unknown joint or
frame name, a hash that differs — raises ``BadInput(path, problem)`` (CLI exit 2).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fixtures import catalog
from harness.core.conventions import Layout
from harness.core.errors import BadInput
from harness.core.io import array_sha256 as digest
from harness.core.io import check_output_file, write_bytes_atomic
from harness.core.strict import (
    MAX_JSON_BYTES,
    MAX_MODEL_FILE_BYTES,
    MAX_NPZ_FILE_BYTES,
    candidate_size_problem,
    holds_warnings,
    is_int,
    loads_json,
    npz_arrays,
    read_regular,
)
from harness.model.mjcf_import import load_mjcf_with_notes
from harness.model.prepared import PreparedModel, prepare_fixture
from harness.model.urdf_import import load_urdf_with_notes

if TYPE_CHECKING:
    from harness.model.prepared import PreparedModel

_F = NDArray[np.float64]
# τ (nv,) [N·m | N] at a time t [s] inside one interval of the knot grid
Segment = Callable[[float], _F]

SCHEMA = "harness-candidate"
SCHEMA_VERSION = 1
INTERPOLATIONS = ("zoh", "linear", "cubic", "lobatto<P>")
LOBATTO_MAX_DEGREE = 32


def lobatto_degree(interpolation: object) -> int | None:
    """P of ``lobatto<P>`` (1 ≤ P ≤ LOBATTO_MAX_DEGREE), None for any other string."""
    m = re.fullmatch(r"lobatto([0-9]{1,2})", interpolation) if isinstance(interpolation, str) \
        else None
    if m is None:
        return None
    P = int(m.group(1))
    return P if 1 <= P <= LOBATTO_MAX_DEGREE else None


def interpolation_problem(interpolation: object, n_knots: int) -> str | None:
    """Why ``interpolation`` cannot interpolate ``n_knots`` knots, or None if it can."""
    if interpolation in ("zoh", "linear", "cubic"):
        return None
    P = lobatto_degree(interpolation)
    if P is None:
        return (f"interpolation must be one of zoh, linear, cubic, lobatto<P> "
                f"(P = 1 … {LOBATTO_MAX_DEGREE}), got {interpolation!r}")
    if (n_knots - 1) % P:
        return (f"{interpolation}: the number of knots minus one ({n_knots - 1}) must be a "
                f"multiple of {P}")
    return None
CONTACT_MODES = ("free", "stick", "slip")
MODE_LABELS = ("measured", "inferred", "assumed")
ARRAY_NAMES = ("q0", "v0", "t", "tau")
EVENT_KINDS = ("impulse",)

_TOP = {"schema", "schema_version", "model", "joints", "arrays_file", "arrays", "controls",
        "parameters", "contact_schedule", "markers", "provenance"}
_MODEL_FIXTURE = {"kind", "name", "sha256"}
_MODEL_FILE = {"kind", "path", "floating", "sha256"}
_ARRAY_ENTRY = {"shape", "dtype", "sha256"}
_CONTROLS = {"kind", "interpolation"}
_PARAMETER = {"value", "unit", "applied"}
_SCHEDULE = {"contact", "mode", "t_start", "t_end", "label"}
_MARKER = {"name", "frame", "offset"}
_PROVENANCE = {"producer", "created", "solver", "status", "notes"}
_EVENT = {"t", "kind", "frame", "impulse", "label"}
_OPTIONAL_TOP = {"events"}


def array_sha256(a: NDArray[Any]) -> str:
    """sha256 of dtype, shape and bytes (the same digest as evidence bundles use)."""
    return digest(a)


@dataclass(frozen=True)
class Event:
    """An impulsive reset at time ``t`` [s]: the impulse ``impulse`` (3,) [N·s], world axes,
    applied at the origin of model frame ``frame``; ``label`` measured | inferred |
    assumed (where the time comes from)."""

    t: float
    frame: str
    impulse: tuple[float, ...]
    label: str
    kind: str = "impulse"

    def to_json(self) -> dict[str, Any]:
        return {"t": self.t, "kind": self.kind, "frame": self.frame,
                "impulse": list(self.impulse), "label": self.label}


@dataclass(frozen=True)
class Marker:
    """A point fixed in ``frame`` (a body or named frame of the model) at ``offset`` (3,) [m]
    in that frame's axes."""

    name: str
    frame: str
    offset: tuple[float, ...]


@dataclass(frozen=True, eq=False)
class Candidate:
    """A validated candidate in canonical coordinates. N knots; nq, nv canonical; m markers.

    q0 (nq,), v0 (nv,), t (N,) [s], tau (N, nv) [N·m | N] are in the *canonical* order
    (the file may list its joints in any order; they are matched by name).
    """

    model: PreparedModel
    model_ref: dict[str, Any]
    q0: _F
    v0: _F
    t: _F
    tau: _F
    interpolation: str = "zoh"
    parameters: dict[str, Any] = field(default_factory=dict)
    contact_schedule: tuple[dict[str, Any], ...] = ()
    markers: tuple[Marker, ...] = ()
    provenance: dict[str, Any] = field(default_factory=dict)
    path: str = ""
    arrays_sha256: dict[str, str] = field(default_factory=dict)  # of the arrays as stored
    manifest_sha256: str = ""
    events: tuple[Event, ...] = ()  # in time order; each at a repeated knot of t

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def duration(self) -> float:
        return float(self.t[-1] - self.t[0])

    def controls(self) -> "Controls":
        return Controls(self.t, self.tau, self.interpolation, self.events)

    def summary(self) -> dict[str, Any]:
        """JSON-able description for evidence manifests and reports."""
        return {"path": self.path, "manifest_sha256": self.manifest_sha256,
                "arrays_sha256": dict(self.arrays_sha256), "model": dict(self.model_ref),
                "fixture": self.model.name, "n_knots": int(self.t.size),
                "t0": float(self.t[0]), "t_end": float(self.t[-1]),
                "interpolation": self.interpolation,
                "parameters": json.loads(json.dumps(self.parameters)),
                "contact_schedule": [dict(c) for c in self.contact_schedule],
                "markers": [{"name": m.name, "frame": m.frame, "offset": list(m.offset)}
                            for m in self.markers],
                "events": [e.to_json() for e in self.events],
                "provenance": json.loads(json.dumps(self.provenance))}


# ----- controls ---------------------------------------------------------------------------
class Controls:
    """τ(t) (nv,) [N·m | N] from N knots, interpolated by ``zoh``, ``linear``, ``cubic`` or
    ``lobatto<P>``.

    ``segment(k)`` is the interpolant of interval [t_k, t_{k+1}] as a function that may be
    evaluated on the closed interval (for ``zoh`` it keeps τ_k at t_{k+1}): integrators
    step segment by segment so a discontinuity of ZOH never falls inside a step.
    ``__call__(t)`` is the right-continuous global interpolant.

    With ``events`` (Event, in time order) the knots repeat once at each event time: the
    zero-length interval k there is the event (``event_at(k)``; an integrator applies its
    reset instead of stepping) and each phase between events is interpolated on its own."""

    def __init__(self, t: ArrayLike, tau: ArrayLike, interpolation: str,
                 events: Sequence[Event] = ()) -> None:
        self.t = np.asarray(t, dtype=float)
        self.tau = np.asarray(tau, dtype=float)
        zero = np.flatnonzero(np.diff(self.t) == 0.0)
        if len(zero) != len(events) or any(self.t[k] != e.t for k, e in zip(zero, events)):
            raise ValueError("the knots repeat exactly once at each event time and nowhere "
                             "else")
        self._events = {int(k): e for k, e in zip(zero, events)}
        starts = [0] + [int(k) + 1 for k in zero]
        ends = [int(k) for k in zero] + [self.t.size - 1]
        for a, b in zip(starts, ends):
            why = interpolation_problem(interpolation, b - a + 1)
            if why or b - a < 1:
                raise ValueError(why or f"phase from knot {a} has a single knot")
        self.interpolation = interpolation
        self.degree = lobatto_degree(interpolation)
        self.nv = self.tau.shape[1]
        self._segs: dict[int | tuple[str, int], Segment] = {}
        self._parent: Controls | None = None
        self._offset = 0
        # phases: (first knot, last knot, Controls of that phase) when there are events
        self._phases = [(a, b, Controls(self.t[a:b + 1], self.tau[a:b + 1], interpolation))
                        for a, b in zip(starts, ends)] if zero.size else []
        if interpolation == "cubic" and not zero.size:
            from scipy.interpolate import CubicSpline

            self._c = CubicSpline(self.t, self.tau, axis=0, bc_type="not-a-knot").c

    def event_at(self, k: int) -> Event | None:
        """The Event at zero-length interval k, or None."""
        root = self._parent or self
        return root._events.get(k + self._offset)

    @property
    def events(self) -> tuple[Event, ...]:
        """The events inside this grid, in time order."""
        root = self._parent or self
        n = self.t.size - 1
        return tuple(e for k, e in sorted(root._events.items())
                     if 0 <= k - self._offset < n)

    def sub(self, a: int, b: int) -> "Controls":
        """The same interpolant restricted to knots a … b (segments a … b − 1): segment k
        of the result is segment a + k of this one (a cubic keeps the full spline's
        pieces, a lobatto group its polynomial)."""
        if not (0 <= a < b < self.t.size):
            raise ValueError(f"sub({a}, {b}) of {self.t.size} knots")
        c = object.__new__(Controls)
        c.t, c.tau = self.t[a:b + 1], self.tau[a:b + 1]
        c.interpolation, c.degree, c.nv = self.interpolation, self.degree, self.nv
        c._segs, c._events, c._phases = {}, {}, []
        root = self._parent or self
        c._parent, c._offset = root, self._offset + a
        return c

    @property
    def n_segments(self) -> int:
        return self.t.size - 1

    def segment(self, k: int) -> Segment:
        """τ (nv,) [N·m | N] on interval k, [t_k, t_{k+1}], as a function of t [s]."""
        if self._parent is not None:
            return self._parent.segment(k + self._offset)
        cached = self._segs.get(k)
        if cached is not None:
            return cached
        fn: Segment
        if self._phases:
            if k in self._events:  # no time passes: the right limit, never integrated
                right = self.tau[k + 1].copy()

                def right_limit(t: float, val: _F = right) -> _F:
                    return val
                fn = right_limit
            else:
                a, _, ph = next(p for p in self._phases if p[0] <= k < p[1])
                fn = ph.segment(k - a)
            self._segs[k] = fn
            return fn
        t0 = self.t[k]
        if self.degree is not None:
            fn = self._lobatto_group(k // self.degree)
            self._segs[k] = fn
            return fn
        if self.interpolation == "zoh":
            held = self.tau[k].copy()

            def zoh(t: float, val: _F = held) -> _F:
                return val
            fn = zoh
        elif self.interpolation == "linear":
            a, slope = self.tau[k], (self.tau[k + 1] - self.tau[k]) / (self.t[k + 1] - t0)

            def linear(t: float, a: _F = a, slope: _F = slope, t0: float = t0) -> _F:
                return a + slope * (t - t0)
            fn = linear
        else:
            c3, c2, c1, c0 = (self._c[i, k].copy() for i in range(4))

            def cubic(t: float, t0: float = t0, c3: _F = c3, c2: _F = c2, c1: _F = c1,
                      c0: _F = c0) -> _F:
                x = t - t0
                return ((c3 * x + c2) * x + c1) * x + c0
            fn = cubic
        self._segs[k] = fn
        return fn

    def _lobatto_group(self, g: int) -> Segment:
        """Barycentric (second form) evaluator of group g's degree-P polynomial."""
        key = ("group", g)
        cached = self._segs.get(key)
        if cached is not None:
            return cached
        P = cast(int, self.degree)  # called for lobatto<P> only
        x = self.t[g * P:g * P + P + 1].copy()
        y = self.tau[g * P:g * P + P + 1].copy()
        w = np.array([1.0 / np.prod(x[j] - np.delete(x, j)) for j in range(P + 1)])
        w /= np.abs(w).max()

        def fn(t: float, x: _F = x, y: _F = y, w: _F = w) -> _F:
            d = t - x
            hit = np.flatnonzero(d == 0.0)
            if hit.size:
                knot: _F = y[hit[0]].copy()
                return knot
            c = w / d
            out: _F = (c @ y) / c.sum()
            return out
        self._segs[key] = fn
        return fn

    def segment_index(self, t: float) -> int:
        k = int(np.searchsorted(self.t, t, side="right")) - 1
        return min(max(k, 0), self.n_segments - 1)

    def __call__(self, t: float) -> _F:
        if self.interpolation == "zoh" and t >= self.t[-1]:
            last: _F = self.tau[-1].copy()
            return last
        return np.array(self.segment(self.segment_index(t))(t), dtype=float)


# ----- validation helpers -------------------------------------------------------------------
def _fields(where: str, what: str, d: object, allowed: Collection[str],
            required: Collection[str] | None = None) -> None:
    if not isinstance(d, dict):
        raise BadInput(where, f"{what} must be an object")
    required = allowed if required is None else required
    unknown = sorted(set(d) - set(allowed))
    missing = sorted(set(required) - set(d))
    if unknown:
        raise BadInput(where, f"{what}: unknown field(s) {', '.join(unknown)}")
    if missing:
        raise BadInput(where, f"{what}: missing field(s) {', '.join(missing)}")


def _finite_number(where: str, what: str, x: object) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise BadInput(where, f"{what} must be a finite number, got {x!r}")
    return float(x)


def _string(where: str, what: str, x: object) -> str:
    if not isinstance(x, str) or not x.strip():
        raise BadInput(where, f"{what} must be a non-empty string")
    return x


def _resolve_model(where: str, ref: object, base: Path) -> PreparedModel:

    if not isinstance(ref, dict) or "kind" not in ref:
        raise BadInput(where, "model must be an object with a kind")
    kind = ref["kind"]
    if kind == "fixture":
        _fields(where, "model", ref, _MODEL_FIXTURE)
        name = _string(where, "model.name", ref["name"])
        if name not in catalog.names():
            raise BadInput(where, f"model: unknown fixture {name!r} (known: "
                                  f"{', '.join(catalog.names())})")
        model = prepare_fixture(name)
        if ref["sha256"] != model.digest:
            raise BadInput(where, f"model: fixture {name} has sha256 {model.digest[:12]}…, "
                                  f"the candidate was made for {str(ref['sha256'])[:12]}… "
                                  "(the fixture changed since)")
        return model
    if kind in ("urdf", "mjcf"):
        _fields(where, "model", ref, _MODEL_FILE)
        rel = _string(where, "model.path", ref["path"])
        if not isinstance(ref["floating"], bool):
            raise BadInput(where, "model.floating must be true or false")
        path = (base / rel) if not os.path.isabs(rel) else Path(rel)
        blob = read_regular(path, f"an {kind.upper()} file", MAX_MODEL_FILE_BYTES,
                            where=f"{where}: model file {path}")
        sha = hashlib.sha256(blob).hexdigest()
        if sha != ref["sha256"]:
            raise BadInput(where, f"model file {path}: sha256 {sha[:12]}… differs from the "
                                  f"candidate's {str(ref['sha256'])[:12]}…")
        if kind == "urdf":

            spec, notes = load_urdf_with_notes(str(path), ref["floating"])
        else:
            spec, notes = load_mjcf_with_notes(str(path), floating=ref["floating"])
        return PreparedModel(spec, str(path), sha, tuple(notes))
    raise BadInput(where, f"model.kind must be fixture, urdf or mjcf, got {kind!r}")


def model_reference(model: PreparedModel) -> dict[str, Any]:
    """The manifest's model entry for a PreparedModel (fixture or user file)."""
    src = model.source
    if src.startswith("fixture:"):
        return {"kind": "fixture", "name": src.split(":", 1)[1], "sha256": model.digest}
    kind = "mjcf" if src.lower().endswith(".xml") or src.lower().endswith(".mjcf") else "urdf"
    return {"kind": kind, "path": os.path.abspath(src), "floating": bool(model.spec.floating),
            "sha256": model.source_sha256}


def _permutation(where: str, layout: Layout,
                 joints: object) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """(q index, v index) arrays: canonical[qi] = file[...]: file block order → canonical."""
    if not isinstance(joints, list) or not all(isinstance(j, str) for j in joints):
        raise BadInput(where, "joints must be a list of joint names")
    known = layout.joint_names
    unknown = [j for j in joints if j not in known]
    if unknown:
        raise BadInput(where, f"joints: unknown joint name(s) {', '.join(unknown)} (model "
                              f"joints: {', '.join(known)})")
    dup = sorted({j for j in joints if joints.count(j) > 1})
    if dup:
        raise BadInput(where, f"joints: listed twice: {', '.join(dup)}")
    missing = [j for j in known if j not in joints]
    if missing:
        raise BadInput(where, f"joints: the model's joint(s) {', '.join(missing)} are missing")
    qi: list[int] = []
    vi: list[int] = []
    for name in joints:
        s = layout.slot(name)
        qi += range(s.iq, s.iq + s.nq)
        vi += range(s.iv, s.iv + s.nv)
    return np.array(qi, dtype=np.intp), np.array(vi, dtype=np.intp)


def _check_array(where: str, name: str, a: NDArray[Any], shape: tuple[int, ...]) -> None:
    if a.dtype != np.float64:
        raise BadInput(where, f"array {name}: dtype {a.dtype}, expected float64")
    if a.shape != shape:
        raise BadInput(where, f"array {name}: shape {list(a.shape)}, expected {list(shape)}")
    bad = ~np.isfinite(a)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise BadInput(where, f"array {name}: non-finite value {float(a[idx])} at index "
                              f"{list(idx)} (NaN and infinity are rejected)")


# ----- load / save ------------------------------------------------------------------------------
@holds_warnings
def load(path: str | os.PathLike[str]) -> Candidate:
    """Read and validate a candidate manifest (and its arrays); raise BadInput(path, ...)."""
    path = Path(path)
    where = str(path)
    raw = read_regular(path, "a candidate manifest", MAX_JSON_BYTES)
    m = loads_json(raw, where, "JSON candidate manifest")
    _fields(where, "candidate", m, _TOP | _OPTIONAL_TOP, required=_TOP)
    if m["schema"] != SCHEMA:
        raise BadInput(where, f"schema is {m['schema']!r}, expected {SCHEMA!r}")
    if not is_int(m["schema_version"]) or m["schema_version"] != SCHEMA_VERSION:
        raise BadInput(where, f"schema_version {m['schema_version']!r}; this harness reads "
                              f"{SCHEMA_VERSION}")
    model = _resolve_model(where, m["model"], path.parent)
    lay = model.layout
    qi, vi = _permutation(where, lay, m["joints"])
    # controls
    _fields(where, "controls", m["controls"], _CONTROLS)
    if m["controls"]["kind"] != "generalized_force":
        raise BadInput(where, "controls.kind must be generalized_force")
    interp = m["controls"]["interpolation"]
    if interp not in ("zoh", "linear", "cubic") and lobatto_degree(interp) is None:
        # an interpolation that is none of them always has a problem (not None)
        raise BadInput(where, "controls." + cast(str, interpolation_problem(interp, 2)))
    # arrays
    entries = m["arrays"]
    if not isinstance(entries, dict):
        raise BadInput(where, "arrays must be an object")
    unknown = sorted(set(entries) - set(ARRAY_NAMES))
    missing = sorted(set(ARRAY_NAMES) - set(entries))
    if unknown or missing:
        raise BadInput(where, f"arrays: unknown {unknown}, missing {missing}")
    for k, e in entries.items():
        _fields(where, f"arrays.{k}", e, _ARRAY_ENTRY)
        if not (isinstance(e["shape"], list) and all(is_int(n) and n >= 0 for n in e["shape"])
                and isinstance(e["dtype"], str) and isinstance(e["sha256"], str)):
            raise BadInput(where, f"arrays.{k}: shape must be a list of sizes, dtype and "
                                  "sha256 strings")
    # the shapes the model implies, checked before the arrays file is opened (N knots free)
    t_shape = entries["t"]["shape"]
    N = t_shape[0] if len(t_shape) == 1 else None
    want = {"q0": [lay.nq], "v0": [lay.nv], "t": t_shape if N is not None else ["N"],
            "tau": [N if N is not None else "N", lay.nv]}
    for k in ARRAY_NAMES:
        if entries[k]["shape"] != want[k]:
            raise BadInput(where, f"array {k}: shape {entries[k]['shape']}, expected "
                                  f"{want[k]}".replace("'N'", "N"))
    too_big = candidate_size_problem(n_knots=N)
    if too_big:  # before the arrays file is opened
        raise BadInput(where, too_big)
    afile = _string(where, "arrays_file", m["arrays_file"])
    if os.path.isabs(afile) or ".." in Path(afile).parts:
        raise BadInput(where, "arrays_file must be a file name next to the manifest")
    apath = path.parent / afile
    if not os.path.lexists(apath):
        raise BadInput(str(apath), "arrays file is missing")
    blob = read_regular(apath, "an arrays file", MAX_NPZ_FILE_BYTES)
    try:  # each member's header checked against the manifest before it is decompressed
        stored = npz_arrays(blob, str(apath), expect={
            k: (entries[k]["dtype"], entries[k]["shape"]) for k in ARRAY_NAMES})
    except BadInput as e:
        plain = e.problem.startswith("holds arrays") or "differs from the manifest" in e.problem
        raise BadInput(str(apath), e.problem if plain else
                       f"unreadable arrays file ({e.problem})") from None
    for k in ARRAY_NAMES:
        ent, a = entries[k], stored[k]
        if array_sha256(a) != ent["sha256"]:
            raise BadInput(str(apath), f"array {k}: sha256 differs from the manifest")
    if stored["t"].ndim != 1:
        raise BadInput(where, f"array t: shape {list(stored['t'].shape)}, expected [N]")
    N = stored["t"].shape[0]
    _check_array(where, "t", stored["t"], (N,))
    if N < 2:
        raise BadInput(where, "array t: needs at least 2 knots")
    events = _events(where, m.get("events", []), model)
    _knots(where, stored["t"], events, interp)
    _check_array(where, "q0", stored["q0"], (lay.nq,))
    _check_array(where, "v0", stored["v0"], (lay.nv,))
    _check_array(where, "tau", stored["tau"], (N, lay.nv))
    q0 = np.empty(lay.nq)
    q0[qi] = stored["q0"]
    v0 = np.empty(lay.nv)
    v0[vi] = stored["v0"]
    tau = np.empty((N, lay.nv))
    tau[:, vi] = stored["tau"]
    try:
        lay.check_q(q0)
    except ValueError as e:
        raise BadInput(where, f"array q0: {e}")
    params = _parameters(where, m["parameters"])
    schedule = _schedule(where, m["contact_schedule"], stored["t"])
    markers = _markers(where, m["markers"], model)
    prov = _provenance(where, m["provenance"])
    return Candidate(model, dict(m["model"]), q0, v0, stored["t"].copy(), tau, interp,
                     params, schedule, markers, prov, where,
                     {k: entries[k]["sha256"] for k in ARRAY_NAMES},
                     hashlib.sha256(raw).hexdigest(), events)


def _events(where: str, evs: object, model: PreparedModel) -> tuple[Event, ...]:
    """The manifest's ``events`` list → (Event, ...) in time order; BadInput on a problem."""
    if not isinstance(evs, list):
        raise BadInput(where, "events must be a list")
    frames = set(model.frames)
    out: list[Event] = []
    for i, e in enumerate(evs):
        _fields(where, f"events[{i}]", e, _EVENT)
        if e["kind"] not in EVENT_KINDS:
            raise BadInput(where, f"events[{i}].kind must be one of {', '.join(EVENT_KINDS)}")
        if e["frame"] not in frames:
            raise BadInput(where, f"events[{i}]: unknown frame {e['frame']!r}")
        if e["label"] not in MODE_LABELS:
            raise BadInput(where, f"events[{i}].label must be one of {', '.join(MODE_LABELS)}")
        imp = e["impulse"]
        if not isinstance(imp, list) or len(imp) != 3:
            raise BadInput(where, f"events[{i}].impulse must be 3 numbers [N·s]")
        out.append(Event(_finite_number(where, f"events[{i}].t", e["t"]), e["frame"],
                         tuple(_finite_number(where, f"events[{i}].impulse", x) for x in imp),
                         e["label"], e["kind"]))
    if any(b.t <= a.t for a, b in zip(out, out[1:])):
        raise BadInput(where, "events must be in strictly increasing time order")
    return tuple(out)


def _knots(where: str, t: _F, events: Sequence[Event], interp: str) -> None:
    """BadInput unless t is increasing, repeats a knot exactly at each event (and only
    there) with the event strictly inside the grid, and each phase fits ``interp``; and
    within the supported knots and duration (candidate_size_problem)."""
    too_big = candidate_size_problem(t.size, float(t[-1] - t[0]) if t.size else 0.0)
    if too_big:
        raise BadInput(where, too_big)
    d = np.diff(t)
    if np.any(d < 0):
        raise BadInput(where, f"array t: not strictly increasing at index "
                              f"{int(np.argmax(d < 0)) + 1}")
    times = {e.t for e in events}
    for k in np.flatnonzero(d == 0):
        if float(t[k]) not in times:
            raise BadInput(where, f"array t: not strictly increasing at index {int(k) + 1} "
                                  "(a knot repeats only at a declared event)")
    for e in events:
        at = np.flatnonzero((t[:-1] == e.t) & (d == 0))
        if at.size != 1:
            raise BadInput(where, f"event at {e.t!r} s: the knot grid must hold its time "
                                  "exactly twice (the end of one phase, the start of the next)")
        if at[0] == 0 or at[0] + 1 == t.size - 1:
            raise BadInput(where, f"event at {e.t!r} s: a phase before and after it needs "
                                  "at least two knots")
    try:
        Controls(t, np.zeros((t.size, 1)), interp, events)
    except ValueError as err:
        raise BadInput(where, f"controls.{err}") from None


def _parameters(where: str, p: object) -> dict[str, dict[str, Any]]:
    if not isinstance(p, dict):
        raise BadInput(where, "parameters must be an object")
    out = {}
    for name, e in p.items():
        _string(where, "parameter name", name)
        _fields(where, f"parameters.{name}", e, _PARAMETER)
        vals = e["value"] if isinstance(e["value"], list) else [e["value"]]
        for v in vals:
            _finite_number(where, f"parameters.{name}.value", v)
        if not isinstance(e["unit"], str):
            raise BadInput(where, f"parameters.{name}.unit must be a string")
        if e["applied"] != "in_model":
            raise BadInput(where, f"parameters.{name}.applied must be 'in_model' (replay "
                                  "applies no parameters: the referenced model must hold them)")
        out[name] = {"value": e["value"], "unit": e["unit"], "applied": "in_model"}
    return out


def _schedule(where: str, s: object, t: _F) -> tuple[dict[str, Any], ...]:
    if not isinstance(s, list):
        raise BadInput(where, "contact_schedule must be a list")
    out = []
    for i, c in enumerate(s):
        _fields(where, f"contact_schedule[{i}]", c, _SCHEDULE)
        _string(where, f"contact_schedule[{i}].contact", c["contact"])
        if c["mode"] not in CONTACT_MODES:
            raise BadInput(where, f"contact_schedule[{i}].mode must be one of "
                                  f"{', '.join(CONTACT_MODES)}")
        if c["label"] not in MODE_LABELS:
            raise BadInput(where, f"contact_schedule[{i}].label must be one of "
                                  f"{', '.join(MODE_LABELS)}")
        a = _finite_number(where, f"contact_schedule[{i}].t_start", c["t_start"])
        b = _finite_number(where, f"contact_schedule[{i}].t_end", c["t_end"])
        if not (t[0] <= a < b <= t[-1]):
            raise BadInput(where, f"contact_schedule[{i}]: needs t0 <= t_start < t_end <= "
                                  f"t_end of the grid")
        out.append(dict(c))
    return tuple(out)


def _markers(where: str, ms: object, model: PreparedModel) -> tuple[Marker, ...]:
    if not isinstance(ms, list):
        raise BadInput(where, "markers must be a list")
    frames = set(model.frames)
    out: list[Marker] = []
    names: set[str] = set()
    for i, mk in enumerate(ms):
        _fields(where, f"markers[{i}]", mk, _MARKER)
        name = _string(where, f"markers[{i}].name", mk["name"])
        if name in names:
            raise BadInput(where, f"markers: name {name!r} is used twice")
        names.add(name)
        if mk["frame"] not in frames:
            raise BadInput(where, f"markers[{i}] ({name}): unknown frame {mk['frame']!r} "
                                  f"(model frames: {', '.join(sorted(frames))})")
        off = mk["offset"]
        if not isinstance(off, list) or len(off) != 3:
            raise BadInput(where, f"markers[{i}] ({name}): offset must be 3 numbers")
        out.append(Marker(name, mk["frame"], tuple(
            _finite_number(where, f"markers[{i}].offset", x) for x in off)))
    return tuple(out)


def _provenance(where: str, p: Any) -> dict[str, Any]:
    _fields(where, "provenance", p, _PROVENANCE)
    for k in ("producer", "created", "status"):
        _string(where, f"provenance.{k}", p[k])
    if not isinstance(p["notes"], str):
        raise BadInput(where, "provenance.notes must be a string")
    if not isinstance(p["solver"], dict):
        raise BadInput(where, "provenance.solver must be an object")
    for k, v in p["solver"].items():
        if not (v is None or isinstance(v, (str, bool, int)) or
                (isinstance(v, float) and math.isfinite(v))):
            raise BadInput(where, f"provenance.solver.{k} must be a string, number, boolean "
                                  "or null")
    return dict(p)


def _own_manifest(path: Path) -> dict[str, Any]:
    """The candidate manifest at ``path`` if it is one (its schema); BadInput otherwise."""
    m = loads_json(read_regular(path, "a candidate manifest", MAX_JSON_BYTES), str(path),
                   "JSON candidate manifest")
    if not isinstance(m, dict) or m.get("schema") != SCHEMA:
        raise BadInput(str(path), "it is not a harness candidate manifest")
    return m


def _own_arrays(apath: Path) -> None:
    """Accept ``apath`` only if the candidate manifest beside it names it and every array
    in it has the hash that manifest records (so the harness provably wrote it)."""
    mpath = apath.with_suffix(".json")
    if not mpath.is_file():
        raise BadInput(str(apath), f"no candidate manifest {mpath.name} beside it names it")
    m = _own_manifest(mpath)
    entries = m.get("arrays")
    if m.get("arrays_file") != apath.name or not isinstance(entries, dict):
        raise BadInput(str(apath), f"{mpath.name} does not name it as its arrays")
    arrays = npz_arrays(read_regular(apath, "candidate arrays", MAX_NPZ_FILE_BYTES),
                        str(apath))
    if sorted(arrays) != sorted(entries) or any(
            not isinstance(entries[k], dict) or digest(a) != entries[k].get("sha256")
            for k, a in arrays.items()):
        raise BadInput(str(apath), f"its arrays are not those {mpath.name} records")


def check_save_target(path: str | os.PathLike[str], option: str = "--out") -> Path:
    """The output-file rule for a candidate (``save``), checked before any work: PATH ends
    in .json; PATH and the .npz beside it can be written, and each is replaced only if the
    harness wrote it (a candidate manifest; arrays a manifest beside them names with their
    hashes). BadInput naming ``option`` otherwise."""
    path = Path(path)
    if path.suffix != ".json":
        raise BadInput(f"{option} {path}", "a candidate manifest must end in .json")
    check_output_file(path, option, recognise=_own_manifest)
    check_output_file(path.with_suffix(".npz"), option, recognise=_own_arrays)
    return path


def save(cand: Candidate, path: str | os.PathLike[str]) -> Path:
    """Write ``cand`` as PATH (manifest, .json) and PATH with suffix .npz (arrays), joints in
    canonical order. Both files are written to temporaries and renamed into place."""
    path = check_save_target(path, "candidate")
    apath = path.with_suffix(".npz")
    arrays = {"q0": np.asarray(cand.q0, dtype=float), "v0": np.asarray(cand.v0, dtype=float),
              "t": np.asarray(cand.t, dtype=float), "tau": np.asarray(cand.tau, dtype=float)}
    manifest = {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
        "model": dict(cand.model_ref),
        "joints": list(cand.model.layout.joint_names),
        "arrays_file": apath.name,
        "arrays": {k: {"shape": list(a.shape), "dtype": a.dtype.name,
                       "sha256": array_sha256(a)} for k, a in arrays.items()},
        "controls": {"kind": "generalized_force", "interpolation": cand.interpolation},
        "parameters": dict(cand.parameters),
        "contact_schedule": [dict(c) for c in cand.contact_schedule],
        "markers": [{"name": mk.name, "frame": mk.frame, "offset": list(mk.offset)}
                    for mk in cand.markers],
        "provenance": dict(cand.provenance),
    }
    if cand.events:
        manifest["events"] = [e.to_json() for e in cand.events]
    blob = json.dumps(manifest, indent=1, allow_nan=False).encode()
    import io

    buf = io.BytesIO()
    np.savez(buf, **cast(dict[str, Any], arrays))  # names only: no allow_pickle among them

    for target, data in ((apath, buf.getvalue()), (path, blob)):
        write_bytes_atomic(target, data)
    return path


def from_arrays(model: PreparedModel, q0: ArrayLike, v0: ArrayLike, t: ArrayLike,
                tau: ArrayLike, interpolation: str = "zoh", markers: Sequence[Marker] = (),
                provenance: Mapping[str, Any] | None = None,
                parameters: Mapping[str, Any] | None = None,
                contact_schedule: Sequence[dict[str, Any]] = (),
                events: Sequence[Event] = ()) -> Candidate:
    """A Candidate built in memory (canonical order), validated like a file would be;
    ``events`` (Event, ...) with their repeated knots in t."""
    lay = model.layout
    where = f"candidate for {model.name}"
    q0, v0 = np.asarray(q0, dtype=float), np.asarray(v0, dtype=float)
    t, tau = np.asarray(t, dtype=float), np.asarray(tau, dtype=float)
    _check_array(where, "t", t, (t.size,))
    events = _events(where, [e.to_json() for e in events], model)
    too_big = candidate_size_problem(n_knots=t.size)
    if too_big:
        raise BadInput(where, too_big)
    if t.size < 2 or not np.all(np.diff(t) >= 0):
        raise BadInput(where, "array t: needs at least 2 increasing knots")
    _knots(where, t, events, interpolation)
    _check_array(where, "q0", q0, (lay.nq,))
    _check_array(where, "v0", v0, (lay.nv,))
    _check_array(where, "tau", tau, (t.size, lay.nv))
    try:
        lay.check_q(q0)
    except ValueError as e:
        raise BadInput(where, f"array q0: {e}")
    frames = set(model.frames)
    for mk in markers:
        if mk.frame not in frames:
            raise BadInput(where, f"marker {mk.name}: unknown frame {mk.frame!r}")
    # every field a file needs, so that what save() writes load() accepts
    prov = {"producer": "unknown", "created": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                            time.gmtime()),
            "solver": {}, "status": "unknown", "notes": ""}
    prov.update(provenance or {})
    prov = _provenance(where, prov)
    arrays = {"q0": q0, "v0": v0, "t": t, "tau": tau}
    return Candidate(model, model_reference(model), q0, v0, t, tau, interpolation,
                     dict(parameters or {}), tuple(contact_schedule), tuple(markers), prov,
                     "", {k: array_sha256(a) for k, a in arrays.items()}, "", events)
