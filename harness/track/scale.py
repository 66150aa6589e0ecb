"""`harness track … --scale SETUP.xml`: an OpenSim ScaleTool setup carried out by the
harness itself (no OpenSim tool in the loop; OpenSim only reads the model files, as for
every `.osim` import): the generic model (the command's MODEL) takes the setup's marker
set, is scaled body by body from the static trial's marker distances and the manual
scales, and its markers are then placed on the static pose solved by the harness's IK.

Dimensions: B bodies, K markers, F frames of a static trial.
Units: m, kg, kg·m², s, rad; scale factors dimensionless; summary keys carry units.

The steps, as OpenSim's ScaleTool takes them (docs/track.md, "Scaling"):

1. *Markers.* The setup's marker set replaces the model's markers of the same names and
   adds the others.
2. *Factors.* Every body (and the ground) starts at (1, 1, 1); the scaling order is
   followed: ``measurements`` — per applied measurement, the mean over its marker pairs of
   (the pair's distance in the static trial, averaged over the frames of its time range,
   per frame) / (the pair's distance on the model at its default pose), written to the
   listed axes of each listed body; ``manualScale`` — each applied Scale's three factors
   replace its body's. A body a measurement or scale names that the model lacks is noted
   and ignored, as OpenSim ignores it.
3. *Scaling* (harness/track/osim_scale.py): mass centres, joint frames, markers, inertias,
   knee-type translation functions; masses kept in proportion (``preserve_mass_
   distribution``) or × the volume factor, then all × (subject mass / total) when the
   setup gives a mass. Written as ``scaled.osim``.
4. *Marker placement.* Markers the static trial lacks are deleted; the static pose is
   solved by the harness's IK (harness/capture/ik.py) on the average of the frames in the
   placer's time range, with the setup's IK tasks, from the model's default pose, holding
   only clamped ranges (as OpenSim's assembler does); then every marker not ``fixed`` is
   moved onto its averaged measured position at that pose. Written as
   ``scaled_placed.osim``: the model the rest of `harness track` runs on.
"""
from __future__ import annotations

import os
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.capture import ik
from harness.capture.motion_files import Markers, read_trc
from harness.core.errors import BadInput
from harness.core.spec import FixtureSpec
from harness.model import registry
from harness.model.osim_import import load_osim_with_notes
from harness.model.prepared import PreparedModel
from harness.model.protocol import EngineAdapter
from harness.track import osim_scale as osc
from harness.track.osim_notes import defaults, scales
from harness.track.scale_setup import ScaleSetup, read_setup

SCALED = "scaled.osim"
PLACED = "scaled_placed.osim"


@dataclass
class Kinematics:
    """A model imported for the scaling's kinematics: spec, notes, adapter, couplings."""
    spec: FixtureSpec
    notes: list[str]
    adapter: EngineAdapter
    held: ik.Held | None

    @classmethod
    def of(cls, path: str, engine: str | None) -> Kinematics:
        spec, notes = load_osim_with_notes(path)  # ranges as limits only where clamped
        name = registry.parse_engines(engine, "--engine")[0] if engine else \
            registry.preferred("track")
        adapter: EngineAdapter = registry.adapter_class(name)(
            PreparedModel(spec, f"scale:{spec.name}"))
        held = ik.Held.of(adapter.layout, spec.couplings) if spec.couplings else None
        return cls(spec, notes, adapter, held)

    def slots(self) -> dict[str, tuple[int, int, float]]:
        """{OpenSim coordinate: (iq, iv, |s|)} of the moving canonical coordinates."""
        sc = scales(self.notes)
        followers = {c.follower for c in self.spec.couplings}
        return {s.name: (s.iq, s.iv, sc.get(s.name, 1.0)) for s in self.adapter.layout.slots
                if s.type in ("revolute", "prismatic") and s.name not in followers}

    def to_osim(self, q: NDArray[np.float64]) -> dict[str, float]:
        """{OpenSim coordinate: value [rad | m]} of canonical q (nq,)."""
        return {n: float(q[iq] / s) for n, (iq, _, s) in self.slots().items()}

    def from_osim(self, values: Mapping[str, float]) -> NDArray[np.float64]:
        """Canonical q (nq,) of OpenSim coordinate values [rad | m] (the others at their
        default), followers held."""
        q = self.default_pose()
        for n, (iq, _, s) in self.slots().items():
            if n in values:
                q[iq] = values[n] * s
        return q if self.held is None else self.held.hold(q)

    def default_pose(self) -> NDArray[np.float64]:
        """Canonical q (nq,) at OpenSim's default coordinate values, followers held."""
        q = np.array(self.adapter.neutral(), dtype=float)
        slots = self.slots()
        for name, v in defaults(self.notes).items():
            if name in slots:
                q[slots[name][0]] = v * slots[name][2]
        return q if self.held is None else self.held.hold(q)


def frame_range(t: NDArray[np.float64], lo: float, hi: float) -> slice:
    """The frames OpenSim's MarkerData averages over [lo, hi] s: from the last frame at or
    before ``lo`` (else the first) to the first one from there at or after ``hi`` (else the
    last), both included."""
    before = np.flatnonzero(t <= lo)
    i0 = int(before[-1]) if before.size else 0
    after = np.flatnonzero(t[i0:] >= hi)
    i1 = i0 + int(after[0]) if after.size else len(t) - 1
    return slice(i0, i1 + 1)


def measure(setup: ScaleSetup, kin: Kinematics, trc: Markers, model_markers: Sequence[str],
            factors: dict[str, NDArray[np.float64]], notes: list[str]) -> dict[str, Any]:
    """Apply the setup's measurements to ``factors`` in place; {measurement: {pairs:
    [{markers, model_m, experimental_m}], factor}}."""
    assert setup.scaler_trc is not None and setup.scaler_range is not None or \
        not setup.measurements
    q = kin.default_pose()
    rows = frame_range(trc.t, *(setup.scaler_range or (-np.inf, np.inf)))
    out: dict[str, Any] = {}
    for m in setup.measurements:
        if not m.pairs:
            notes.append(f"measurement {m.name}: no marker pair; not used (as OpenSim)")
            continue
        pairs, ratios = [], []
        for a, b in m.pairs:
            for name in (a, b):
                if name not in model_markers:
                    raise BadInput(setup.path, f"measurement {m.name}: marker {name} is "
                                   "not a marker of the model (nor of its marker set)")
                if name not in trc.labels:
                    raise BadInput(setup.path, f"measurement {m.name}: marker {name} is "
                                   f"not in {setup.scaler_trc}")
            p = kin.adapter.frame_poses(q, [a, b])[:, :3]
            model_len = float(np.linalg.norm(p[0] - p[1]))
            Y = trc.xyz[rows][:, [trc.labels.index(a), trc.labels.index(b)]]
            exp_len = float(np.mean(np.linalg.norm(Y[:, 1] - Y[:, 0], axis=1)))
            pairs.append({"markers": [a, b], "model_m": model_len, "experimental_m": exp_len})
            ratios.append(exp_len / model_len)
        factor = float(sum(ratios) / len(ratios))
        if not np.isfinite(factor):
            notes.append(f"measurement {m.name}: a marker is missing in a frame of the "
                         "time range; not used (as OpenSim)")
            continue
        out[m.name] = {"pairs": pairs, "factor": factor}
        for body, axes in m.bodies:
            if body not in factors:
                notes.append(f"measurement {m.name}: body {body} is not in the model; "
                             "ignored (as OpenSim ignores it)")
                continue
            for ax in axes:
                factors[body][ax] = factor
    return out


def scale_factors(setup: ScaleSetup, kin: Kinematics | None, trc: Markers | None,
                  model_markers: Sequence[str], body_names: Sequence[str], notes: list[str]
                  ) -> tuple[dict[str, NDArray[np.float64]], dict[str, Any]]:
    """({body | ground: s (3,)}, the measurements' figures), in the setup's order."""
    factors = {b: np.ones(3) for b in [osc.GROUND, *body_names]}
    figures: dict[str, Any] = {}
    for step in (setup.order if setup.scaler else ()):
        if step == "measurements" and setup.measurements:
            assert kin is not None and trc is not None
            figures.update(measure(setup, kin, trc, model_markers, factors, notes))
        elif step == "manualScale":
            for body, s in setup.manual:
                if body not in factors:
                    notes.append(f"manual scale of {body}: not a body of the model; "
                                 "ignored (as OpenSim ignores it)")
                    continue
                factors[body] = np.array(s, dtype=float)
    return factors, figures


@dataclass
class StaticProblem:
    """The static pose's IK problem: the weighted markers (labels (K,), their averaged
    positions y (K, 3) m, weights w (K,)) and the coordinate tasks, on ``kin``."""
    kin: Kinematics
    labels: list[str]
    y: NDArray[np.float64]
    w: NDArray[np.float64]
    tasks: ik.CoordinateTasks | None
    frames: int
    t: tuple[float, float]

    def cost(self, q: NDArray[np.float64]) -> float:
        """Σ w_k ‖p_k(q) − y_k‖² + Σ w_c (q_c − target_c)² [m² and rad², as weighted] at
        canonical q (nq,): what OpenSim's marker placer minimises too."""
        p = self.kin.adapter.frame_poses(q, self.labels)[:, :3]
        seen = np.all(np.isfinite(self.y), axis=1)
        c = float(self.w[seen] @ np.sum((p[seen] - self.y[seen]) ** 2, axis=1))
        if self.tasks is not None:
            c += float(np.sum((self.tasks.gain * (q[self.tasks.iq] - self.tasks.target)) ** 2))
        return c

    def solve(self) -> tuple[NDArray[np.float64], dict[str, Any]]:
        """(canonical q (nq,), figures) of the harness's IK from the default pose."""
        q, res, iters = ik.solve_frame(self.kin.adapter, self.labels, self.y,
                                       self.kin.default_pose(), weights=self.w, max_iter=500,
                                       held=self.kin.held, tasks=self.tasks)
        e = np.linalg.norm(res, axis=1)
        return q, {"frames": self.frames, "t_s": list(self.t), "iterations": int(iters),
                   "markers": len(self.labels), "weighted_cost": self.cost(q),
                   "marker_rmse_mm": 1000 * float(np.sqrt(np.nanmean(e ** 2))),
                   "marker_max_mm": 1000 * float(np.nanmax(e)),
                   "coordinates": self.kin.to_osim(q)}


def static_problem(setup: ScaleSetup, kin: Kinematics, trc: Markers,
                   model_markers: Sequence[str]) -> StaticProblem:
    """The static pose's problem: the average of the placer's frames (OpenSim's
    ``averageRow``: every frame in the time range, clipped to the file's; a marker missing
    in one of them is unseen), the setup's IK tasks."""
    lo, hi = setup.placer_range or (trc.t[0], trc.t[-1])
    lo, hi = max(lo, trc.t[0]), min(hi, trc.t[-1])
    rows = (trc.t >= lo) & (trc.t <= hi)
    labels = list(setup.weights)
    for m in labels:
        if m not in model_markers:
            raise BadInput(setup.path, f"IKMarkerTask {m}: not a marker of the model")
        if m not in trc.labels:
            raise BadInput(setup.path, f"IKMarkerTask {m}: not in {setup.placer_trc}")
    y = trc.xyz[rows][:, [trc.labels.index(m) for m in labels]].mean(axis=0)
    slots = kin.slots()
    for n in setup.coordinate_tasks:
        if n not in slots and not any(f"coordinate {n} is locked" in x for x in kin.notes):
            raise BadInput(setup.path, f"IKCoordinateTask {n}: no coordinate of that name")
    names = [n for n in setup.coordinate_tasks if n in slots]
    dv = defaults(kin.notes)
    tasks = None
    if names:
        iq = np.array([slots[n][0] for n in names])
        iv = np.array([slots[n][1] for n in names])
        s = np.array([slots[n][2] for n in names])
        target = [v if kind == "manual_value" else dv.get(n, 0.0)
                  for n, (_, kind, v) in ((n, setup.coordinate_tasks[n]) for n in names)]
        tasks = ik.CoordinateTasks(iq, iv, s * np.array(target),
                                   np.sqrt([setup.coordinate_tasks[n][0] for n in names]) / s)
    w = np.array([setup.weights[m] for m in labels])
    return StaticProblem(kin, labels, y, w, tasks, int(rows.sum()), (float(lo), float(hi)))


def place(kin: Kinematics, q: NDArray[np.float64], trc: Markers, setup: ScaleSetup,
          ms: Sequence[osc.ModelMarker]) -> tuple[list[osc.ModelMarker], list[str]]:
    """(the markers with every one not ``fixed`` moved onto its measured position at the
    pose q: the average of the frames OpenSim's MarkerData takes, missing samples left
    out; the names of those not moved)."""
    lo, hi = setup.placer_range or (trc.t[0], trc.t[-1])
    with warnings.catch_warnings():  # a marker missing in every frame: NaN, not moved
        warnings.simplefilter("ignore", RuntimeWarning)
        avg = np.nanmean(trc.xyz[frame_range(trc.t, lo, hi)], axis=0)
    out, kept = [], []
    for m in ms:
        y = avg[trc.labels.index(m.name)]
        if m.fixed or not np.all(np.isfinite(y)):
            out.append(m)
            kept.append(m.name)
            continue
        if m.body == osc.GROUND:
            loc = y
        else:
            pose = kin.adapter.frame_pose(q, m.body)
            loc = pose[3:].reshape(3, 3).T @ (y - pose[:3])
        out.append(osc.ModelMarker(m.name, m.body, (loc[0], loc[1], loc[2]), m.fixed))
    return out, kept



@dataclass
class Placement:
    """What the marker placement used, kept for the comparison with OpenSim's: the static
    problem, its pose q (nq,), the .trc, the markers before placement."""
    problem: StaticProblem
    q: NDArray[np.float64]
    trc: Markers
    markers: list[osc.ModelMarker]


@dataclass
class Scaled:
    """The scaling's outcome: the placed model's path (in the work folder), the files to
    write ({name: bytes}), the summary section, the factors {body: s (3,)}, the final
    markers, {body: (mass kg, inertia (6,) kg·m²)}, the placement (None: not applied)."""
    model_path: str
    files: dict[str, bytes]
    summary: dict[str, Any]
    factors: dict[str, NDArray[np.float64]]
    markers: list[osc.ModelMarker]
    inertial: dict[str, tuple[float, NDArray[np.float64]]]
    placement: Placement | None
    setup: ScaleSetup


def _write(work: str, name: str, data: bytes) -> str:
    path = os.path.join(work, name)
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def _generic(generic_path: str, setup: ScaleSetup
             ) -> tuple[Any, str, list[str], list[osc.ModelMarker]]:
    """(the generic <Model> with the setup's marker set, its file version, body names,
    markers)."""
    model, version = osc.load(generic_path)
    names = list(osc.bodies(model))
    ms = osc.markers(model, generic_path)
    if setup.marker_set_file is not None:
        extra = osc.marker_set_file(setup.marker_set_file)
        for m in extra:
            if m.body != osc.GROUND and m.body not in names:
                raise BadInput(setup.marker_set_file, f"marker {m.name}: body {m.body} is "
                               f"not a body of {generic_path}")
        ms = osc.merge_markers(ms, extra)
    osc.set_markers(model, ms)
    return model, version, names, ms


def _place(setup: ScaleSetup, model: Any, version: str, ms: list[osc.ModelMarker],
           scaled: bytes, work: str, engine: str | None
           ) -> tuple[list[osc.ModelMarker], Placement, dict[str, Any]]:
    """The MarkerPlacer: (the markers after it, what it used, its figures)."""
    assert setup.placer_trc is not None
    trc = read_trc(setup.placer_trc)
    dropped = [m.name for m in ms if m.name not in trc.labels]
    ms = [m for m in ms if m.name in trc.labels]
    kin = Kinematics.of(_write(work, SCALED, scaled), engine)
    pb = static_problem(setup, kin, trc, [m.name for m in ms])
    q, figures = pb.solve()
    placed, kept = place(kin, q, trc, setup, ms)
    figures.update(markers_deleted=dropped, markers_not_moved=kept)
    return placed, Placement(pb, q, trc, ms), figures


def run(generic_path: str, setup_path: str, work: str, engine: str | None = None
        ) -> Scaled:
    """Carry out the ScaleTool setup on the generic model (module docstring); the two
    models written into ``work`` (and returned as files); BadInput naming the file and
    the problem on anything unsupported, before anything is written."""
    w0 = time.perf_counter()
    setup = read_setup(setup_path)
    model, version, names, ms = _generic(generic_path, setup)
    notes: list[str] = []
    if setup.model_file is not None:
        notes.append(f"the setup's <model_file> {setup.model_file} is not read: the "
                     f"command's model {generic_path} is the generic model")
    kin = trc = None
    if setup.scaler and "measurements" in setup.order and setup.measurements:
        assert setup.scaler_trc is not None
        trc = read_trc(setup.scaler_trc)
        kin = Kinematics.of(_write(work, "generic_with_markers.osim",
                                   osc.text(model, version)), engine)
    factors, figures = scale_factors(setup, kin, trc, [m.name for m in ms], names, notes)
    inertial = osc.apply(model, factors, setup.preserve_mass, setup.mass_kg, generic_path)
    ms = osc.scale_markers(ms, factors)
    model.set("name", setup.name)
    osc.set_markers(model, ms)
    files = {SCALED: osc.text(model, version)}
    scale_wall = time.perf_counter() - w0
    placement, static = None, None
    if setup.placer:
        ms, placement, static = _place(setup, model, version, ms, files[SCALED], work, engine)
        osc.set_markers(model, ms)
    files[PLACED] = osc.text(model, version)
    summary = {
        "setup": setup_path, "generic_model": generic_path, "model_name": setup.name,
        "scaling_order": list(setup.order) if setup.scaler else [],
        "scale_factors": {b: [float(x) for x in s] for b, s in factors.items()
                          if b != osc.GROUND},
        "measurements": figures, "preserve_mass_distribution": setup.preserve_mass,
        "subject_mass_kg": setup.mass_kg if setup.mass_kg > 0 else None,
        "mass_kg": {b: float(m) for b, (m, _) in inertial.items()},
        "mass_total_kg": float(sum(m for m, _ in inertial.values())),
        "static_pose": static, "notes": notes,
        "set_aside": "muscles and other forces, wrap objects, contact and display geometry "
                     "are left as in the generic model",
        "scale_wall_s": scale_wall, "wall_s": time.perf_counter() - w0,
        "files": [SCALED, PLACED]}
    return Scaled(_write(work, PLACED, files[PLACED]), files, summary, factors, list(ms),
                  inertial, placement, setup)


def compare(ours: Scaled, theirs: Mapping[str, Any]) -> dict[str, Any]:
    """Ours against OpenSim's ScaleTool (engines' ``run_scale_tool`` figures): the largest
    relative difference of the scale factors, masses and inertias (each inertia relative
    to its body's largest moment); the largest distance [mm] between placed markers; with
    a placement, our placement at OpenSim's own static pose against OpenSim's [mm], both
    static poses' weighted costs (ours and OpenSim's pose, one function) and the largest
    difference of a rotational coordinate [deg]."""
    rel = 0.0
    for b, s in ours.factors.items():
        for k, v in enumerate(theirs["scale_factors"].get(b, [None] * 3)):
            if v is not None:
                rel = max(rel, abs(float(s[k]) - v) / abs(v))
    mass = inertia = 0.0
    for b, (m, I) in ours.inertial.items():
        o = theirs["bodies"][b]
        mass = max(mass, abs(m - o["mass_kg"]) / o["mass_kg"]) if o["mass_kg"] else mass
        Io = np.array(o["inertia"])
        if np.max(np.abs(Io)) > 0:
            inertia = max(inertia, float(np.max(np.abs(I - Io)) / np.max(np.abs(Io))))
    tm = theirs["markers"]
    same = sorted(tm) == sorted(m.name for m in ours.markers) and all(
        tm[m.name]["body"] == m.body for m in ours.markers)
    mm = max((1000 * float(np.linalg.norm(np.subtract(m.location, tm[m.name]["location_m"])))
              for m in ours.markers if m.name in tm), default=0.0)
    out: dict[str, Any] = {"scale_factor_rel_max": rel, "mass_rel_max": mass,
                           "inertia_rel_max": inertia, "marker_sets_equal": same,
                           "placed_marker_max_mm": mm}
    pl = ours.placement
    if pl is not None and theirs.get("static_pose") is not None:
        q_os = pl.problem.kin.from_osim(theirs["static_pose"])
        at, _ = place(pl.problem.kin, q_os, pl.trc, ours.setup, pl.markers)
        out["placed_at_their_pose_max_mm"] = max(
            (1000 * float(np.linalg.norm(np.subtract(m.location, tm[m.name]["location_m"])))
             for m in at if m.name in tm), default=0.0)
        ours_q, theirs_q = pl.problem.kin.to_osim(pl.q), pl.problem.kin.to_osim(q_os)
        rot = {s.name for s in pl.problem.kin.adapter.layout.slots if s.type == "revolute"}
        out.update(static_cost_ours=pl.problem.cost(pl.q), static_cost_theirs=
                   pl.problem.cost(q_os), static_pose_max_deg=max(
                       (float(np.degrees(abs(ours_q[n] - theirs_q[n]))) for n in ours_q
                        if n in rot), default=0.0))
    return out
