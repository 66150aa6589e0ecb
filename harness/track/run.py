"""`harness track MODEL.osim MARKERS.trc|.c3d [--loads EXTERNAL_LOADS.xml] --out DIR`:
marker inverse kinematics with the joint limits held (a model's point loops held too),
then inverse dynamics with the external loads (labelled measured, or assumed for the
fitted foot forces a swing's export writes: ``contact_label``), of any OpenSim model whose
coordinates are one-dof; beside them, OpenSim's
own InverseKinematicsTool and InverseDynamicsTool run live on the same model, markers,
weights, kinematics and loads; then the residual reduction (harness/track/reduce.py).

Dimensions: F frames of the window, K tracked markers, n OpenSim coordinates (the canonical
model's one-dof joints less the followers of couplings), nq = nv canonical coordinates.
Units: s, m (markers; mm in the summary's names), rad | m, N | N·m; summary keys carry
their units in their names.

Then the tracked motion is replayed open loop in every available double-precision engine,
segment by segment (harness/track/replay.py).

Exit codes: 2 for bad input (one line naming the file, nothing written); 1 when any check
is not met or not run (a check that cannot run on the inputs, e.g. the residual reduction
of a model attached to the ground, is said so); 0 only when every check is met.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.capture import ik
from harness.capture.motion_files import (
    ExternalForce,
    Markers,
    Table,
    read_external_loads,
    read_markers,
    read_table,
    spline_columns,
    table_text,
    trc_text,
)
from harness.core import figures
from harness.core.errors import BadInput
from harness.core.io import OutputKind, SameAs, check_output_folder, write_folder_atomic
from harness.core.spec import WORLD_BODY, FixtureSpec
from harness.core.strict import read_regular, read_xml
from harness.core.tolerances import lookup
from harness.model import osim_adjust, registry
from harness.model.import_common import read_model_file
from harness.model.osim_import import load_osim_with_notes
from harness.model.osim_swing import ASSUMED_CONTACT
from harness.model.prepared import PreparedModel
from harness.model.protocol import EngineAdapter
from harness.track import dynamics, reduce, scale
from harness.track import replay as track_replay
from harness.track.osim_notes import defaults as _defaults
from harness.track.osim_notes import scales as _scales
from harness.track.report import render

# the weight [m⁻²] of a point loop's gap in our IK (a marker weighs 1 m⁻²): OpenSim's IK
# holds a constraint exactly; at 1e6 a gap costs as a marker a thousand times as far
LOOP_WEIGHT = 1e6
# the engine(s) whose own IK and ID tools run beside ours (the engines table's role)
TOOLS = registry.for_role("motion_tools")
NOT_RUN = {
    "engines_replayed": track_replay.NOT_RUN_NO_ENGINE,  # said only when it is so
}
FILES = frozenset({"summary.json", "ik.mot", "id.sto", "index.html", figures.ASSET,
                   "rra_q.sto", "rra_id.sto", "adjusted.osim", scale.SCALED, scale.PLACED}
                  | {f"{n}_{k}" for n in TOOLS for k in ("ik.mot", "id.sto", scale.PLACED)})


def recognise_summary(path: Path) -> None:
    """Raise unless ``path`` is a track summary.json (the output-folder rule)."""
    doc = json.loads(read_regular(path, "a track summary", 1 << 24))
    if not isinstance(doc, dict) or doc.get("command") != "track":
        raise BadInput(str(path), "not a track summary (no \"command\": \"track\")")


OUTPUT = OutputKind("a track output folder", "summary.json", recognise_summary, FILES)


@dataclass(frozen=True)
class Inputs:
    """Everything read and checked before any work."""
    model_path: str
    trc_path: str
    loads_path: str | None
    spec: FixtureSpec
    notes: list[str]
    markers: Markers
    weights: dict[str, float]
    coordinate_tasks: dict[str, tuple[float, str, float]]
    weights_from: str
    forces: list[ExternalForce]
    loads: Table | None
    frames: NDArray[np.int_]
    scale: dict[str, float]
    loops: tuple[tuple[str, str], ...] = ()
    coordinate_values: tuple[str, Table] | None = None  # (path, table): from_file tasks


@dataclass
class TrackOutcome:
    """The written folder, its summary, the checks and the exit code (0 | 1)."""
    path: Path
    summary: dict[str, Any]
    checks: list[dict[str, Any]]
    exit_code: int
    report: Path


def find_ik_setup(trc_path: str) -> str | None:
    """The IK setup beside the .trc that names it as its marker_file, or None."""
    folder = os.path.dirname(os.path.abspath(trc_path))
    for name in sorted(os.listdir(folder)):
        if not name.lower().endswith(".xml"):
            continue
        p = os.path.join(folder, name)
        try:
            text = read_regular(p, "an XML file", 1 << 24).decode("utf-8", "replace")
        except BadInput:
            continue
        if "<InverseKinematicsTool" in text and re.search(
                r"<marker_file>\s*" + re.escape(os.path.basename(trc_path)) + r"\s*<", text):
            return p
    return None


def ik_weights(setup_path: str) -> dict[str, float]:
    """{marker: weight} of the applied IKMarkerTasks (weight > 0) of an IK setup file."""
    root = read_xml(setup_path, "an IK setup file")
    out = {}
    for task in root.iter("IKMarkerTask"):
        apply = (task.findtext("apply") or "true").strip().lower() == "true"
        w = float((task.findtext("weight") or "1").strip())
        if apply and w > 0:
            out[task.get("name", "")] = w
    if not out:
        raise BadInput(setup_path, "no applied IKMarkerTask with a positive weight")
    return out


def ik_coordinate_tasks(setup_path: str) -> dict[str, tuple[float, str, float]]:
    """{coordinate: (weight, value_type, value [rad | m])} of the applied IKCoordinateTasks
    (weight > 0) of an IK setup file; value_type default_value, manual_value or from_file
    (the values of the setup's coordinate_file: ``ik_coordinate_values``)."""
    root = read_xml(setup_path, "an IK setup file")
    out = {}
    for task in root.iter("IKCoordinateTask"):
        apply = (task.findtext("apply") or "true").strip().lower() == "true"
        w = float((task.findtext("weight") or "1").strip())
        kind = (task.findtext("value_type") or "default_value").strip()
        if not (apply and w > 0):
            continue
        if kind not in ("default_value", "manual_value", "from_file"):
            raise BadInput(setup_path, f"IKCoordinateTask {task.get('name')}: value_type "
                           f"{kind} is not supported (default_value, manual_value, "
                           "from_file)")
        out[task.get("name", "")] = (w, kind, float((task.findtext("value") or "0").strip()))
    return out


def ik_coordinate_values(setup_path: str, names: Sequence[str]
                         ) -> tuple[str, Table] | None:
    """(path, table) of the IK setup's ``<coordinate_file>`` (relative to the setup's folder)
    when any of the coordinate tasks ``names`` takes its values from_file, else None;
    BadInput when it names no file or the file lacks a column of one of them."""
    root = read_xml(setup_path, "an IK setup file")
    want = [t.get("name", "") for t in root.iter("IKCoordinateTask")
            if t.get("name", "") in names
            and (t.findtext("value_type") or "").strip() == "from_file"]
    if not want:
        return None
    name = (root.findtext(".//coordinate_file") or "").strip()
    if not name or name == "Unassigned":
        raise BadInput(setup_path, f"IKCoordinateTask {want[0]} takes its values from_file "
                       "but the setup names no coordinate_file")
    path = os.path.join(os.path.dirname(os.path.abspath(setup_path)), name)
    table = read_table(path)
    for n in want:
        table.column(n, path)
    return path, table


def ik_accuracy(setup_path: str | None) -> float | None:
    """The IK setup's ``<accuracy>`` (OpenSim's IK solver's), or None when it has none."""
    if setup_path is None:
        return None
    text = read_regular(setup_path, "an IK setup file", 1 << 24).decode("utf-8", "replace")
    m = re.search(r"<accuracy>([^<]*)</accuracy>", text)
    try:
        return float(m.group(1)) if m else None
    except ValueError:
        raise BadInput(setup_path, f"<accuracy> {m.group(1).strip()!r} is not a number"
                       ) from None


def ik_time_range(setup_path: str) -> tuple[float, float] | None:
    """The IK setup's ``<time_range>`` (first, last) [s], or None when it has none."""
    text = read_regular(setup_path, "an IK setup file", 1 << 24).decode("utf-8", "replace")
    m = re.search(r"<time_range>([^<]*)</time_range>", text)
    if m is None or not m.group(1).strip():
        return None
    try:
        lo, hi = (float(x) for x in m.group(1).split())
    except ValueError:
        raise BadInput(setup_path, f"<time_range> {m.group(1).strip()!r} is not two "
                       "numbers") from None
    return lo, hi


def read_inputs(model_path: str, trc_path: str, loads_path: str | None,
                ik_setup: str | None, start: float | None, end: float | None) -> Inputs:
    """Every input read and checked (BadInput naming the file and the problem)."""
    try:
        registry.providing("osim_to_spec")
    except BadInput:
        why = "; ".join(f"{n} is unavailable: {registry.probe(n).reason}" for n in TOOLS)
        raise BadInput(model_path, f"no engine available here reads .osim models ({why})"
                       ) from None
    markers = read_markers(trc_path)
    forces: list[ExternalForce] = []
    loads = None
    if loads_path is not None:
        forces, _, loads = read_external_loads(loads_path)
    try:
        spec, notes = load_osim_with_notes(model_path, ranges_as_limits=True)
    except BadInput as e:  # track has no --repair-inertia: OpenSim's tools read the file as is
        hint = e.problem.find("; --repair-inertia")
        if hint < 0:
            raise
        raise BadInput(e.where, e.problem[:hint] + "; track compares with OpenSim's tools on "
                       "the file as written, so the inertia is to be corrected in the file "
                       "(harness parity --osim … --repair-inertia compares a repaired copy)"
                       ) from None
    bad = [j.name for j in spec.moving_joints() if j.type not in ("revolute", "prismatic")]
    if bad or spec.floating:
        raise BadInput(model_path, "track needs one-dof coordinates; "
                       f"{', '.join(bad) or 'the free root'} is not")
    spec, loops = held_loops(spec, model_path, notes)
    frames_in_model = {f.name for f in spec.frames}
    setup = ik_setup if ik_setup is not None else find_ik_setup(trc_path)
    ctasks: dict[str, tuple[float, str, float]] = {}
    cvalues = None
    if setup is not None:
        weights = ik_weights(setup)
        window = ik_time_range(setup) if start is None and end is None else None
        start, end = window if window is not None else (start, end)  # the setup's window
        ctasks = ik_coordinate_tasks(setup)
        cvalues = ik_coordinate_values(setup, list(ctasks))
        moving = {j.name for j in spec.moving_joints()}
        for name in ctasks:
            if name not in moving and f"coordinate {name} is locked" not in " ".join(notes):
                raise BadInput(setup, f"IKCoordinateTask {name}: no coordinate of that name "
                               f"in {model_path}")
        for lab in weights:
            if lab not in frames_in_model:
                raise BadInput(setup, f"marker {lab} is not a marker of {model_path}")
            if lab not in markers.labels:
                raise BadInput(trc_path, f"marker {lab} (weighted in {setup}) is not in the file")
    else:
        for lab in markers.labels:
            if lab not in frames_in_model:
                raise BadInput(trc_path, f"marker {lab} is not a marker of {model_path}")
        weights = {lab: 1.0 for lab in markers.labels}
    bodies = {b.name for b in spec.bodies} | {dynamics.GROUND}
    for f in forces:
        for what, b in (("applied_to_body", f.body), ("force_expressed_in_body", f.force_in),
                        ("point_expressed_in_body", f.point_in)):
            if b not in bodies or b == WORLD_BODY:
                raise BadInput(str(loads_path), f"ExternalForce {f.name}: {what} {b} is not a "
                               f"body of {model_path}")
    frames = _window(markers, loads, start, end, trc_path, str(loads_path))
    return Inputs(model_path, trc_path, loads_path, spec, notes, markers, weights, ctasks,
                  setup or "equal weights (no IK setup found beside the .trc)", forces, loads,
                  frames, _scales(notes), loops, cvalues)


def contact_label(loads_path: str | None) -> dict[str, str | None]:
    """{"contact_label", "contact_label_reason"}: "assumed" for loads whose ExternalLoads
    is named ``ASSUMED_CONTACT`` (the foot forces ``harness osim-export`` writes: fitted
    from an assumed contact model), "measured" for any other loads (force plates); None
    without loads (or with none applied). The file was read and checked already."""
    if loads_path is None:
        return {"contact_label": None, "contact_label_reason": "no external loads given"}
    el = read_xml(loads_path, "an ExternalLoads .xml file").find(".//ExternalLoads")
    if el is not None and el.get("name") == ASSUMED_CONTACT:
        return {"contact_label": "assumed", "contact_label_reason": "the ExternalLoads is "
                f"named {ASSUMED_CONTACT}: fitted from an assumed contact model (no force "
                "plate), as harness osim-export writes a swing's foot forces"}
    return {"contact_label": "measured", "contact_label_reason": "external loads from a "
            f"file whose ExternalLoads is not named {ASSUMED_CONTACT}: taken as measured "
            "(force plates)"}


def held_loops(spec: FixtureSpec, model_path: str, notes: list[str]
               ) -> tuple[FixtureSpec, tuple[tuple[str, str], ...]]:
    """(the model without its constraints, the (frame_a, frame_b) of its point loops):
    the IK holds each loop as a pair of points of weight ``LOOP_WEIGHT`` (OpenSim's IK
    holds a constraint exactly); the inverse dynamics and the replay leave the loops out,
    as OpenSim's InverseDynamicsTool does (noted). BadInput for another kind of loop."""
    for c in spec.constraints:
        if c.kind != "point":
            raise BadInput(model_path, f"constraint {c.name} ({c.kind}): track holds point "
                           "loops only")
        notes.append(f"constraint {c.name}: held by the IK (the points {c.frame_a} and "
                     f"{c.frame_b} drawn together with weight {LOOP_WEIGHT:g} m⁻², a marker "
                     "weighing 1); the inverse dynamics and the replay leave it out, as "
                     "OpenSim's InverseDynamicsTool does")
    loops = tuple((c.frame_a, c.frame_b) for c in spec.constraints)
    return (dataclasses.replace(spec, constraints=()) if loops else spec), loops


def _window(markers: Markers, loads: Table | None, start: float | None, end: float | None,
            trc_path: str, loads_path: str) -> NDArray[np.int_]:
    """Indices of the .trc frames in [start, end] [s] (and inside the loads' time span)."""
    t = markers.t
    lo = t[0] if start is None else start
    hi = t[-1] if end is None else end
    keep = (t >= lo - 1e-9) & (t <= hi + 1e-9)
    if loads is not None:
        inside = (t >= loads.t[0] - 1e-9) & (t <= loads.t[-1] + 1e-9)
        if not np.any(keep & inside):
            raise BadInput(loads_path, f"its data span t = {loads.t[0]:g}–{loads.t[-1]:g} s "
                           "covers no frame of the markers' window")
        keep &= inside
    idx = np.flatnonzero(keep)
    if len(idx) < 6:
        raise BadInput(trc_path, f"{len(idx)} frame(s) in the window t = {lo:g}–{hi:g} s; the "
                       "derivatives need at least 6")
    return idx


def _adapter(spec: FixtureSpec, engine: str | None) -> EngineAdapter:
    """Our IK and ID's engine: ``engine``, else the one the engines table prefers for it."""
    name = registry.parse_engines(engine, "--engine")[0] if engine else \
        registry.preferred("track")
    model = PreparedModel(spec, f"track:{spec.name}")
    adapter: EngineAdapter = registry.adapter_class(name)(model)
    return adapter


class Coordinates:
    """The OpenSim coordinates of a canonical model: names (n,), canonical v indices, and
    |s| (the canonical coordinate is |s| × OpenSim's); a rotational flag each."""

    def __init__(self, adapter: EngineAdapter, spec: FixtureSpec, scale: dict[str, float]):
        followers = {c.follower for c in spec.couplings}
        slots = [s for s in adapter.layout.slots if s.name not in followers]
        self.names = [s.name for s in slots]
        self.iv = np.array([s.iv for s in slots], dtype=int)
        self.iq = np.array([s.iq for s in slots], dtype=int)
        self.scale = np.array([scale.get(s.name, 1.0) for s in slots])
        self.rotational = np.array([s.type == "revolute" for s in slots])

    def to_osim(self, Q: NDArray[np.float64]) -> NDArray[np.float64]:
        """Canonical Q (F, nq) → OpenSim's (F, n) [rad | m]."""
        out: NDArray[np.float64] = Q[:, self.iq] / self.scale
        return out

    def to_canonical(self, X: NDArray[np.float64], names: Sequence[str], nq: int,
                     held: ik.Held | None) -> NDArray[np.float64]:
        """OpenSim's (F, len(names)) → canonical (F, nq), followers held."""
        Q = np.zeros((len(X), nq))
        for k, n in enumerate(names):
            if n in self.names:
                j = self.names.index(n)
                Q[:, self.iq[j]] = X[:, k] * self.scale[j]
        if held is not None:
            for f in range(len(Q)):
                held.hold(Q[f])
        return Q


def initial_pose(adapter: EngineAdapter, coords: Coordinates, inp: Inputs
                 ) -> NDArray[np.float64]:
    """q (nq,) [rad | m] the IK starts from: the model's default pose (each coordinate's
    default value, where OpenSim's IK starts too), followers held."""
    q = np.array(adapter.neutral(), dtype=float)
    for n, v in _defaults(inp.notes).items():
        if n in coords.names:
            j = coords.names.index(n)
            q[coords.iq[j]] = coords.scale[j] * v
    held = ik.Held.of(adapter.layout, inp.spec.couplings) if inp.spec.couplings else None
    return q if held is None else held.hold(q)


def coordinate_tasks(inp: Inputs, coords: Coordinates) -> ik.CoordinateTasks | None:
    """The IK setup's coordinate tasks on the canonical coordinates (a locked coordinate's
    task is dropped: it does not move), or None."""
    names = [n for n in inp.coordinate_tasks if n in coords.names]
    if not names:
        return None
    j = [coords.names.index(n) for n in names]
    defaults = _defaults(inp.notes)
    target: Any = [(v if kind == "manual_value" else defaults.get(n, 0.0))
                   for n, (_, kind, v) in ((n, inp.coordinate_tasks[n]) for n in names)]
    if inp.coordinate_values is not None:  # from_file: a target per frame
        target = from_file_targets(inp, coords, names, np.array(target))
    s = coords.scale[j]
    return ik.CoordinateTasks(coords.iq[j], coords.iv[j], s * np.array(target),
                              np.sqrt([inp.coordinate_tasks[n][0] for n in names]) / s)


def from_file_targets(inp: Inputs, coords: Coordinates, names: Sequence[str],
                      target: NDArray[np.float64]) -> NDArray[np.float64]:
    """(F, k) [rad | m, OpenSim's]: ``target`` (k,) with the from_file tasks' columns
    replaced by the coordinate file's values at the window's frames, splined through every
    sample (at a sample's time its value: where OpenSim's own spline of the file passes
    too), degrees to radians for a rotational coordinate of a file in degrees."""
    assert inp.coordinate_values is not None
    table = inp.coordinate_values[1]
    t = inp.markers.t[inp.frames]
    out = np.tile(target, (len(t), 1))
    for k, n in enumerate(names):
        if inp.coordinate_tasks[n][1] != "from_file":
            continue
        col = spline_columns(table.t, table.column(n, "")[:, None], t)[:, 0]
        rot = coords.rotational[coords.names.index(n)]
        out[:, k] = np.radians(col) if table.in_degrees and rot else col
    return out


def marker_errors(adapter: EngineAdapter, labels: Sequence[str], Q: NDArray[np.float64],
                  Y: NDArray[np.float64]) -> tuple[float, float]:
    """(RMSE, max) [m] of the markers of Q (F, nq) against Y (F, K, 3), seen pairs only."""
    P = np.stack([adapter.frame_poses(q, list(labels))[:, :3] for q in Q])
    e = np.linalg.norm(P - Y, axis=2)
    seen = np.isfinite(e)
    return float(np.sqrt(np.mean(e[seen] ** 2))), float(np.max(e[seen]))


def root_coordinates(spec: FixtureSpec) -> list[str]:
    """The moving joints between the world and the first body with mass (the pelvis's six
    of a gait model): their generalized forces are the residuals."""
    mass = {b.name: b.mass for b in spec.bodies}
    out, at = [], WORLD_BODY
    while True:
        nxt = [j for j in spec.joints if j.parent == at]
        if len(nxt) != 1:
            return out
        j = nxt[0]
        if j.type != "fixed":
            out.append(j.name)
        if mass.get(j.child, 0.0) > 0:
            return out
        at = j.child


def _residuals(tau: NDArray[np.float64], coords: Coordinates, spec: FixtureSpec
               ) -> dict[str, Any]:
    """Mean and peak over frames of the norm of the root's translational (N) and
    rotational (N·m) generalized forces; None with a reason for a model whose root does not
    translate (attached to the ground: its root joint is a real joint, not a residual)."""
    root = root_coordinates(spec)
    if not any(not coords.rotational[coords.names.index(n)] for n in root):
        out_: dict[str, Any] = {}
        for key, unit in (("force", "N"), ("moment", "Nm")):
            out_[f"residual_{key}_mean_{unit}"] = out_[f"residual_{key}_peak_{unit}"] = None
            out_[f"residual_{key}_reason"] = ("the model is attached to the ground (its root "
                                              "joint does not translate): no residual")
        return out_
    tr = [coords.names.index(n) for n in root if not coords.rotational[coords.names.index(n)]]
    ro = [coords.names.index(n) for n in root if coords.rotational[coords.names.index(n)]]
    out: dict[str, Any] = {}
    for key, idx, unit in (("force", tr, "N"), ("moment", ro, "Nm")):
        if idx:
            m = np.linalg.norm(tau[:, idx], axis=1)
            out[f"residual_{key}_mean_{unit}"] = float(np.mean(m))
            out[f"residual_{key}_peak_{unit}"] = float(np.max(m))
        else:
            out[f"residual_{key}_mean_{unit}"] = out[f"residual_{key}_peak_{unit}"] = None
            out[f"residual_{key}_reason"] = "the model's root has no such coordinate"
    return out


def _rel(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """Worst over rows of max|a − b| / max(max|a|, max|b|) (the tolerance table's rule)."""
    num = np.max(np.abs(a - b), axis=1)
    den = np.maximum(np.max(np.abs(a), axis=1), np.max(np.abs(b), axis=1))
    return float(np.max(num / np.where(den > 0, den, 1.0)))


def tool_side(inp: Inputs, adapter: EngineAdapter, coords: Coordinates,
              held: ik.Held | None, t: NDArray[np.float64], Q: NDArray[np.float64],
              Q_id: NDArray[np.float64], tau: NDArray[np.float64], tmp: str
              ) -> dict[str, Any]:
    """The tools engine's own IK and ID tools on the same inputs (its IK against our IK's
    Q, its ID on the kinematics Q_id of ours), and their differences from ours;
    {"available": False, "reason"} when it is unavailable or its tools fail."""
    name = TOOLS[0] if TOOLS else "(none)"
    if not TOOLS or not registry.probe(name).available:
        why = registry.probe(name).reason if TOOLS else "no engine has the tools"
        return {"engine": name, "available": False, "reason": f"{name} unavailable: {why}"}
    tools = registry.adapter_class(name)
    try:
        return _run_tools(tools, name, inp, adapter, coords, held, t, Q, Q_id, tau, tmp)
    except Exception as e:  # a tool that fails, however: said in the summary and the report
        return {"engine": name, "available": False,
                "reason": f"{name}'s tools failed: {type(e).__name__}: {e}"}


def tool_marker_file(inp: Inputs, tmp: str) -> str:
    """The marker file the tools read: the .trc as given, or for a .c3d the markers we read
    from it written as a .trc in ``tmp`` (metres, 17 digits: the same numbers, axes, labels
    and times on both sides)."""
    if not inp.trc_path.lower().endswith(".c3d"):
        return inp.trc_path
    path = os.path.join(tmp, "markers_from_c3d.trc")
    Path(path).write_text(trc_text(inp.markers, "markers_from_c3d.trc"))
    return path


def tool_ik_options(inp: Inputs) -> dict[str, Any]:
    """The tools' IK options beyond the markers and tasks, from the IK setup: the coordinate
    file of its from_file tasks and its accuracy (OpenSim's default 1e-5 when it has none)."""
    setup = inp.weights_from if inp.weights_from.lower().endswith(".xml") else None
    out: dict[str, Any] = {}
    if inp.coordinate_values:
        out["coordinate_file"] = inp.coordinate_values[0]
    accuracy = ik_accuracy(setup)
    if accuracy is not None:
        out["accuracy"] = accuracy
    return out


def _run_tools(tools: Any, name: str, inp: Inputs, adapter: EngineAdapter,
               coords: Coordinates, held: ik.Held | None, t: NDArray[np.float64],
               Q: NDArray[np.float64], Q_id: NDArray[np.float64], tau: NDArray[np.float64],
               tmp: str) -> dict[str, Any]:
    """``tool_side``'s work once the tools' engine is available."""
    labels = [lab for lab in inp.markers.labels if lab in inp.weights]
    w0 = time.perf_counter()
    r = tools.motion_ik_tool(inp.model_path, tool_marker_file(inp, tmp), inp.weights,
                                         float(t[0]), float(t[-1]), tmp,
                                         coordinate_tasks=inp.coordinate_tasks,
                                         **tool_ik_options(inp))
    ik_wall = time.perf_counter() - w0
    if len(r["t"]) != len(t) or np.max(np.abs(r["t"] - t)) > lookup("track",
                                                                    "tool_frame_times").atol:
        raise RuntimeError("its IK returned other frames than the window's")
    Qo = coords.to_canonical(r["q"], r["names"], adapter.nq, held)
    Y = inp.markers.xyz[inp.frames][:, [inp.markers.labels.index(lab) for lab in labels]]
    rmse, mx = marker_errors(adapter, labels, Qo, Y)
    ours, theirs = coords.to_osim(Q), coords.to_osim(Qo)
    rot = coords.rotational
    rms_deg = np.degrees(np.sqrt(np.mean((ours[:, rot] - theirs[:, rot]) ** 2, axis=0)))
    trans_mm = 1000 * np.sqrt(np.mean((ours[:, ~rot] - theirs[:, ~rot]) ** 2, axis=0))
    out: dict[str, Any] = {
        "engine": name, "available": True, "ik_settings": r["settings"],
        "marker_rmse_mm": 1000 * rmse, "marker_max_mm": 1000 * mx,
        "marker_rmse_mm_own_report": 1000 * float(np.sqrt(np.mean(r["marker_rms_m"] ** 2))),
        "ik_rms_deg": dict(zip([n for n, k in zip(coords.names, rot) if k],
                               map(float, rms_deg))),
        "ik_rms_mm": dict(zip([n for n, k in zip(coords.names, rot) if not k],
                              map(float, trans_mm))),
        "q": theirs}
    coord_file = os.path.join(tmp, "harness_q.sto")
    Path(coord_file).write_text(table_text("harness_ik", t, coords.names,
                                           coords.to_osim(Q_id), False))
    w0 = time.perf_counter()
    d = tools.motion_id_tool(inp.model_path, coord_file, inp.loads_path,
                                       float(t[0]), float(t[-1]), tmp)
    out["ik_wall_s"], out["id_wall_s"] = ik_wall, time.perf_counter() - w0
    cols = [f"{n}_{'moment' if k else 'force'}" for n, k in zip(coords.names, rot)]
    have = [i for i, c in enumerate(cols) if c in d["labels"]]
    tau_o = d["tau"][:, [d["labels"].index(cols[i]) for i in have]]
    out.update(id_settings=d["settings"], id_rel=_rel(tau[:, have], tau_o),
               id_columns=[cols[i] for i in have], tau=tau_o)
    out["files"] = {f"{name}_ik.mot": Path(r["file"]).read_bytes(),
                    f"{name}_id.sto": Path(d["file"]).read_bytes()}
    return out


def scale_side(scaled: scale.Scaled, generic_path: str, tmp: str
               ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The tools engine's ScaleTool on the same setup and generic model, compared with our
    scaling (``scale.compare``): (its section of the summary, with its placed model among
    "files"; the scaling's checks, "not run" with the reason when it is unavailable or
    fails). Without a marker placement only the scale factors' check applies."""
    name = TOOLS[0] if TOOLS else "(none)"
    names = ["scale factors, masses and inertias against OpenSim's ScaleTool, relative",
             "placed markers against OpenSim's ScaleTool [mm]"]
    if not TOOLS or not registry.probe(name).available:
        why = f"{name} unavailable: " + (registry.probe(name).reason if TOOLS
                                         else "no engine has the tools")
        return ({"engine": name, "available": False, "reason": why},
                [_check(n, None, "OpenSim's ScaleTool", None, why) for n in names])
    try:
        theirs = registry.adapter_class(name).motion_scale_tool(scaled.setup.path,
                                                                generic_path, tmp)
    except Exception as e:  # a tool that fails, however: said in the summary and the report
        why = f"{name}'s ScaleTool failed: {type(e).__name__}: {e}"
        return ({"engine": name, "available": False, "reason": why},
                [_check(n, None, "OpenSim's ScaleTool", None, why) for n in names])
    cmp = scale.compare(scaled, theirs)
    rtol = lookup("track", "scale_vs_tool").rtol
    worst = max(cmp["scale_factor_rel_max"], cmp["mass_rel_max"], cmp["inertia_rel_max"])
    checks = [_check(names[0], worst, f"≤ {rtol:g}", worst <= rtol)]
    if "placed_at_their_pose_max_mm" in cmp:
        at, lim = cmp["placed_at_their_pose_max_mm"], lookup(
            "track", "placement_at_tool_pose_mm").atol
        ours, th = cmp["static_cost_ours"], cmp["static_cost_theirs"]
        lim2 = lookup("track", "placed_markers_vs_tool_mm").atol
        mm = cmp["placed_marker_max_mm"]
        checks += [
            _check("our marker placement at OpenSim's static pose against OpenSim's [mm]",
                   at, f"≤ {lim:g}", at <= lim),
            _check("static pose's weighted marker cost against OpenSim's", ours,
                   f"≤ OpenSim's {th:.6g}", ours <= th),
            _check(names[1], mm, f"≤ {lim2:g}", mm <= lim2 and cmp["marker_sets_equal"],
                   "" if cmp["marker_sets_equal"] else "the two marker sets differ")]
    side = {"engine": name, "available": True, "settings": theirs["settings"],
            "wall_s": theirs["wall_s"], "scale_factors": theirs["scale_factors"],
            "static_pose": theirs["static_pose"], "vs_ours": cmp,
            "files": {f"{name}_{scale.PLACED}": Path(theirs["file"]).read_bytes()}}
    return side, checks


def track(model_path: str, trc_path: str, *, out: str | os.PathLike[str],
          loads_path: str | None = None, ik_setup: str | None = None,
          start: float | None = None, end: float | None = None, engine: str | None = None,
          lowpass_hz: float | None = None, scale_setup: str | None = None,
          command_line: Sequence[str] = (),
          progress: Callable[[str], None] | None = None) -> TrackOutcome:
    """Run the command (module docstring); the folder is written whole or not at all.
    ``scale_setup``: an OpenSim ScaleTool setup carried out first on ``model_path`` (the
    generic model; harness/track/scale.py), the rest running on the placed model."""
    say = progress or (lambda s: None)
    check_output_folder(out, OUTPUT)
    with tempfile.TemporaryDirectory(prefix="harness_scale_") as work:
        scaled = None
        if scale_setup is not None:
            say(f"scaling: {scale_setup}")
            scaled = scale.run(model_path, scale_setup, work, engine)
        return _track(model_path, scaled, trc_path, out, loads_path, ik_setup, start, end,
                      engine, lowpass_hz, command_line, say)


def _track(model_path: str, scaled: scale.Scaled | None, trc_path: str,
           out: str | os.PathLike[str], loads_path: str | None, ik_setup: str | None,
           start: float | None, end: float | None, engine: str | None,
           lowpass_hz: float | None, command_line: Sequence[str],
           say: Callable[[str], None]) -> TrackOutcome:
    """``track``'s work once the model is chosen (the placed one when ``scaled``)."""
    inp = read_inputs(scaled.model_path if scaled else model_path, trc_path, loads_path,
                      ik_setup, start, end)
    adapter = _adapter(inp.spec, engine)
    held = ik.Held.of(adapter.layout, inp.spec.couplings) if inp.spec.couplings else None
    coords = Coordinates(adapter, inp.spec, inp.scale)
    t = inp.markers.t[inp.frames]
    labels = [lab for lab in inp.markers.labels if lab in inp.weights]
    Y = inp.markers.xyz[inp.frames][:, [inp.markers.labels.index(lab) for lab in labels]]
    w = np.array([inp.weights[lab] for lab in labels])
    say(f"IK: {len(t)} frames, {len(labels)} markers, engine {adapter.name}")
    w0 = time.perf_counter()
    res = ik.track(adapter, labels, Y, initial_pose(adapter, coords, inp), weights=w,
                   max_iter=200,
                   couplings=inp.spec.couplings, tasks=coordinate_tasks(inp, coords),
                   pairs=[(a, b, LOOP_WEIGHT) for a, b in inp.loops])
    loads = dynamics.AppliedLoads.at(inp.forces, inp.loads, t) if inp.loads is not None \
        else None
    say("ID")
    Q_id = res.q if lowpass_hz is None else dynamics.lowpass(
        res.q, held, coords.iq, inp.markers.rate_hz, lowpass_hz, "--lowpass-hz")
    tau_c = dynamics.inverse_dynamics(adapter, held, t, Q_id, loads)
    fit_wall = time.perf_counter() - w0
    tau = tau_c[:, coords.iv] * coords.scale
    rmse, mx = marker_errors(adapter, labels, res.q, Y)
    with tempfile.TemporaryDirectory(prefix="harness_track_") as tmp:
        say("the tools beside: " + ", ".join(TOOLS))
        side = tool_side(inp, adapter, coords, held, t, res.q, Q_id, tau, tmp)
        sc_side, sc_checks = (scale_side(scaled, model_path, tmp) if scaled
                              else ({}, []))
    rep = track_replay.replay(PreparedModel(inp.spec, f"track:{inp.spec.name}"), adapter,
                              held, coords, t, Q_id, inp.forces, inp.loads, say)
    series = rep.pop("series", None)
    summary, checks = summarise(inp, adapter, coords, t, rmse, mx, tau, side, fit_wall,
                                list(command_line), rep)
    summary["kinematics_lowpass_hz"] = lowpass_hz
    say("residual reduction")
    rra_files, rra_checks = residual_reduction(inp, adapter, coords, held, t, Q_id, loads,
                                               labels, Y, summary)
    files_extra = rra_files
    checks[-1:-1] = rra_checks
    summary["checks"][-1:-1] = rra_checks
    if scaled is not None:
        checks[0:0] = sc_checks
        summary["checks"][0:0] = sc_checks
        summary.update(model=model_path, scaled_model=scale.PLACED,
                       scale={**scaled.summary, "reference_tool": {
                           k: v for k, v in sc_side.items() if k != "files"}})
        files_extra = {**rra_files, **scaled.files, **sc_side.get("files", {})}
    code = 0 if all(c["ok"] is True for c in checks) else 1
    summary["exit_code"] = code
    files: dict[str, bytes | SameAs] = {
        "summary.json": (json.dumps(summary, indent=1, allow_nan=False) + "\n").encode(),
        "ik.mot": table_text("ik", t, coords.names,
                             _degrees(coords, coords.to_osim(res.q)), True).encode(),
        "id.sto": table_text("id", t, summary["id_columns"], tau, False).encode()}
    files.update(side.get("files", {}))
    files.update(files_extra)
    files[figures.ASSET] = figures.plotly_asset()  # the report's charts load it from here
    files["index.html"] = render(summary, checks, code, t, coords.names,
                                 coords.to_osim(res.q), side.get("q"), tau,
                                 side.get("tau"), side.get("id_columns"), series).encode()
    path = write_folder_atomic(out, files, OUTPUT)
    return TrackOutcome(path, summary, checks, code, path / "index.html")


def residual_reduction(inp: Inputs, adapter: EngineAdapter, coords: Coordinates,
                       held: ik.Held | None, t: NDArray[np.float64], Q_id: NDArray[np.float64],
                       loads: dynamics.AppliedLoads | None, labels: list[str],
                       Y: NDArray[np.float64], summary: dict[str, Any]
                       ) -> tuple[dict[str, bytes | SameAs], list[dict[str, Any]]]:
    """The RRA-like reduction (harness/track/reduce.py) from the ID's kinematics Q_id: the
    summary updated in place (the residual keys become those after it; those before keep
    ``_before`` names), its files and checks; "not run" with the reason on a model with no
    residual."""
    name = "residual reduction (RRA-like)"
    if summary["residual_force_mean_N"] is None:
        why = summary["residual_force_reason"]
        summary["residual_reduction"] = None
        summary["not_run"]["residual_reduction"] = why
        return {}, [_check(name, None, "run", None, why)]
    root = root_coordinates(inp.spec)
    ri = np.array([coords.names.index(n) for n in root])
    p = reduce.Problem(adapter, held, coords.iq, coords.iv, ri, coords.rotational[ri], t,
                       loads)
    sigma = reduce.tracking_sigma(inp.spec, coords.names, coords.rotational, coords.scale)
    w0 = time.perf_counter()
    red = reduce.reduce(p, inp.spec, Q_id, reduce.com_body_of(inp.spec), sigma)
    rmse, mx = marker_errors(red.adapter, labels, red.Q, Y)
    tau_root = red.tau * coords.scale[ri]
    for k, unit in (("force_mean", "N"), ("force_peak", "N"), ("moment_mean", "Nm"),
                    ("moment_peak", "Nm")):
        summary[f"residual_{k}_before_{unit}"] = summary[f"residual_{k}_{unit}"]
    summary.update(reduce.norms(tau_root, p.rot))
    summary["residual_reduction"] = {
        **red.figures, "wall_s": time.perf_counter() - w0,
        "residual_signed_mean": dict(zip(root, map(float, np.mean(tau_root, axis=0)))),
        "kinematic_changes": reduce.changes(coords.names, coords.rotational, coords.scale,
                                            coords.iq, Q_id, red.Q),
        "marker_rmse_mm": 1000 * rmse, "marker_max_mm": 1000 * mx,
        "mass_total_after_kg": sum(reduce.masses(red.spec).values()),
        "kinematics_file": "rra_q.sto", "generalized_forces_file": "rra_id.sto",
        "adjusted_model_file": "adjusted.osim"}
    tau_all = dynamics.inverse_dynamics(red.adapter, held, t, red.Q, loads)
    tau_all = tau_all[:, coords.iv] * coords.scale
    files: dict[str, bytes | SameAs] = {
        "rra_q.sto": table_text("rra_q", t, coords.names, coords.to_osim(red.Q),
                                False).encode(),
        "rra_id.sto": table_text("rra_id", t, summary["id_columns"], tau_all, False).encode(),
        "adjusted.osim": _adjusted_model(inp.model_path, summary["residual_reduction"])}
    outside = summary["residual_reduction"]["outside_range"] = reduce.outside_range(
        red.adapter, red.Q, inp.scale)
    summary["residual_reduction"]["outside_range_before"] = reduce.outside_range(
        red.adapter, Q_id, inp.scale)
    checks = [_check("reduced kinematics outside the coordinates' ranges [frames]",
                     outside["frames"], "0", outside["frames"] == 0)]
    for what, key, tol in (("residual force after reduction, mean [N]",
                            "residual_force_mean_N", "rra_force_mean_N"),
                           ("residual moment after reduction, mean [N·m]",
                            "residual_moment_mean_Nm", "rra_moment_mean_Nm"),
                           ("marker RMSE after reduction [mm]", None, "rra_marker_rmse_mm")):
        lim = lookup("track", tol).atol
        v = summary[key] if key else 1000 * rmse
        checks.append(_check(what, v, f"≤ {lim:g}", v <= lim))
    return files, checks


def _adjusted_model(model_path: str, r: dict[str, Any]) -> bytes:
    """The input .osim with the reduction's mass scale and mass centre (``r``: the
    summary's ``residual_reduction``) written into it (harness/model/osim_adjust.py); its
    notes go into ``r["adjusted_model_notes"]``."""
    text = read_model_file(model_path, ".osim")
    out, notes = osim_adjust.adjusted_osim(text, os.path.dirname(os.path.abspath(model_path)),
                                           r["mass_scale"], r["com_body"], r["com_after_m"])
    r["adjusted_model_notes"] = notes
    return out


def _degrees(coords: Coordinates, X: NDArray[np.float64]) -> NDArray[np.float64]:
    out = X.copy()
    out[:, coords.rotational] = np.degrees(out[:, coords.rotational])
    return out


def _check(name: str, value: float | None, target: str, ok: bool | None, why: str = ""
           ) -> dict[str, Any]:
    return {"name": name, "value": value, "target": target, "ok": ok, "why": why}


def summarise(inp: Inputs, adapter: EngineAdapter, coords: Coordinates,
              t: NDArray[np.float64], rmse: float, mx: float, tau: NDArray[np.float64],
              side: dict[str, Any], fit_wall: float, command_line: list[str],
              rep: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(summary.json's document, the checks table); ``rep`` the replay's section
    (harness/track/replay.py)."""
    ik_tol = lookup("track", "ik_vs_tool_deg").atol
    id_tol = lookup("track", "id_vs_tool").rtol
    tool = side["engine"]
    ik_key, id_key = f"ik_vs_{tool}_rms_deg", f"id_vs_{tool}_rel"
    s: dict[str, Any] = {
        "command": "track", "command_line": command_line, "model": inp.model_path,
        "markers": inp.trc_path, "loads": inp.loads_path, "engine": adapter.name,
        "frames": len(t), "t_start_s": float(t[0]), "t_end_s": float(t[-1]),
        "markers_tracked": len(inp.weights), "marker_weights_from": inp.weights_from,
        "coordinate_tasks": {n: {"weight": w, "value_type": k, "value": v}
                             for n, (w, k, v) in inp.coordinate_tasks.items()},
        "markers_not_tracked": [m for m in inp.markers.labels if m not in inp.weights],
        "coordinates": coords.names,
        "id_columns": [f"{n}_{'moment' if r else 'force'}" for n, r in
                       zip(coords.names, coords.rotational)],
        "marker_rmse_mm": 1000 * rmse, "marker_max_mm": 1000 * mx,
        **_residuals(tau, coords, inp.spec),
        **contact_label(inp.loads_path if inp.forces else None),
        "external_forces": [{"name": f.name, "body": f.body} for f in inp.forces],
        "fit_wall_s": fit_wall, "residual_reduction": None,
        **track_replay.summary_keys(rep),
        "not_run": {k: v for k, v in NOT_RUN.items()
                    if k != "engines_replayed" or not rep.get("available")},
        "import_notes": inp.notes}
    checks = []
    if side.get("available"):
        ik_deg = max(side["ik_rms_deg"].values())
        s.update({ik_key: ik_deg, id_key: side["id_rel"],
                  "reference_tool": {k: v for k, v in side.items()
                                     if k not in ("q", "tau", "files")}})
        checks += [
            _check("marker RMSE against OpenSim's IK [mm]", 1000 * rmse,
                   f"≤ OpenSim's {side['marker_rmse_mm']:.4f} mm",
                   1000 * rmse <= side["marker_rmse_mm"]),
            _check("IK coordinates against OpenSim's IK, worst RMS [deg]", ik_deg,
                   f"≤ {ik_tol:g}°", ik_deg <= ik_tol),
            _check("ID generalized forces against OpenSim's ID, relative", side["id_rel"],
                   f"≤ {id_tol:g}", side["id_rel"] <= id_tol)]
    else:
        s.update({ik_key: None, id_key: None, "reference_tool": side})
        checks += [_check(n, None, "OpenSim's tools", None, side["reason"]) for n in
                   ("IK against OpenSim's IK", "ID against OpenSim's ID")]
    checks += [track_replay.check(rep) if rep.get("available") else
               _check("replay in every engine", None, "run", None, rep["reason"])]
    s["checks"] = [{k: (v if not (isinstance(v, float) and not math.isfinite(v)) else None)
                    for k, v in c.items()} for c in checks]
    return s, checks
