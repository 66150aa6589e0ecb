"""A fitted swing written for OpenSim's own tools, by OpenSim itself: golfer.osim, swing.mot,
markers.trc, grf.mot + external_loads.xml, id_harness.sto, ik_setup.xml, id_setup.xml and
notes.txt (harness/model/osim_export.py prepares the SwingExport: y-up axes, OpenSim's
coordinates, the loads and the harness's inverse dynamics).

Units: the model SI (m, kg, kg·m², rad); .mot rotations in degrees (``inDegrees=yes``),
translations in m; markers.trc mm; grf.mot forces N, points m (ground); id_harness.sto
N (translations) and N·m (rotations), columns named as OpenSim's InverseDynamicsTool names
them (``<coordinate>_force`` / ``<coordinate>_moment``). The setup files name the other
files by bare name: OpenSim's tools read them from the setup file's folder.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from engines.opensim_osim import _print_atomic, _quiet, motion_text, trc_text
from harness.core.errors import BadInput
from harness.core.io import write_text_atomic
from harness.model.binding import Binding
from harness.model.osim_swing import (
    ASSUMED_CONTACT,
    ASSUMED_CONTACT_NOTE,
    RootCoordinate,
    SwingExport,
)

BINDING = Binding("opensim")  # a missing binding is reported by the registry
with BINDING:
    import opensim

NAMES = {"model": "golfer.osim", "motion": "swing.mot", "markers": "markers.trc",
         "forces": "grf.mot", "loads": "external_loads.xml", "ik": "ik_setup.xml",
         "id": "id_setup.xml", "inverse_dynamics": "id_harness.sto", "notes": "notes.txt"}


def pelvis_joint(root: Sequence[RootCoordinate]) -> Callable[[Any, Any], Any]:
    """A builder of the six-coordinate CustomJoint ``ground_pelvis`` (ground → the root
    body, both frames at the body's origin): ``root``'s three rotations (body-fixed, in
    order) then its three translations along ground's axes, each a coordinate with its
    range [rad, m]."""
    def build(ground: Any, body: Any) -> Any:
        st = opensim.SpatialTransform()
        for k, rc in enumerate(root):
            ta = st.updTransformAxis(k)
            names = opensim.ArrayStr()
            names.append(rc.name)
            ta.setCoordinateNames(names)
            ta.setAxis(opensim.Vec3(*rc.axis))
            ta.set_function(opensim.LinearFunction(1.0, 0.0))
        zero = opensim.Vec3(0.0, 0.0, 0.0)
        joint = opensim.CustomJoint("ground_pelvis", ground, zero, zero, body, zero, zero, st)
        joint.finalizeFromProperties()  # builds its coordinates
        for k, rc in enumerate(root):
            c = joint.upd_coordinates(k)
            c.setName(rc.name)
            c.setRangeMin(rc.lower)
            c.setRangeMax(rc.upper)
        return joint
    return build


def _model(ex: SwingExport, build_model: Callable[..., Any]) -> tuple[Any, list[bool]]:
    """golfer.osim's model (markers in the MarkerSet, every coordinate's default the first
    fitted frame's value, clamped to its range) and which coordinates rotate."""
    spec = ex.spec
    frames = {f.name: f for f in spec.frames}
    missing = [lab for lab in ex.markers if lab not in frames]
    if missing:
        raise BadInput(spec.source or spec.name, "markers without a frame on the model: "
                       + ", ".join(missing[:5]))
    # the markers go to the MarkerSet (points: a frame's orientation does not matter);
    # the other named frames stay offset frames on their bodies
    markers = [frames[lab] for lab in ex.markers]
    model = build_model(replace(spec, frames=tuple(f for f in spec.frames
                                                   if f.name not in set(ex.markers))),
                        root_joint=pelvis_joint(ex.root))
    bodies = model.getBodySet()
    for f in markers:
        model.addMarker(opensim.Marker(f.name, bodies.get(f.body), opensim.Vec3(*f.xyz)))
    model.finalizeConnections()
    cs = model.getCoordinateSet()
    absent = [n for n in ex.names if not cs.contains(n)]
    if absent:
        raise BadInput(spec.source or spec.name, "the OpenSim model has no coordinate named "
                       + ", ".join(absent[:3]))
    rot = []
    for k, n in enumerate(ex.names):
        c = cs.get(n)
        lo, hi = c.getRangeMin(), c.getRangeMax()
        c.setDefaultValue(float(np.clip(ex.Q[0, k], lo, hi)))  # the fit holds its limits
        c.setDefaultClamped(True)
        rot.append(c.getMotionType() == opensim.Coordinate.Rotational)
    return model, rot


def _loads(ex: SwingExport, folder: str) -> None:
    """grf.mot (time, per contact point ``<name>_v{x,y,z}`` N and ``<name>_p{x,y,z}`` m,
    ground) and external_loads.xml (one ExternalForce per point on its body, force and
    point expressed in ground, no torque: a point contact), the ExternalLoads named
    ``ASSUMED_CONTACT`` with a comment saying so (its provenance: fitted, not measured)."""
    cols = ["time"]
    blocks = [ex.t[:, None]]
    el = opensim.ExternalLoads()
    el.setName(ASSUMED_CONTACT)
    el.setDataFileName(NAMES["forces"])
    for name, body, F, P in ex.contacts:
        cols += [f"{name}_v{a}" for a in "xyz"] + [f"{name}_p{a}" for a in "xyz"]
        blocks += [F, P]
        ef = opensim.ExternalForce()
        ef.setName(name)
        ef.set_applied_to_body(body)
        ef.set_force_expressed_in_body("ground")
        ef.set_point_expressed_in_body("ground")
        ef.set_force_identifier(f"{name}_v")
        ef.set_point_identifier(f"{name}_p")
        el.cloneAndAppend(ef)
    V = np.hstack(blocks)
    head = ["foot_contact", "version=1", f"nRows={len(V)}", f"nColumns={len(cols)}",
            "inDegrees=no", "endheader", "\t".join(cols)]
    rows = ["\t".join(f"{x:.17g}" for x in r) for r in V]
    write_text_atomic(os.path.join(folder, NAMES["forces"]), "\n".join(head + rows) + "\n")
    path = os.path.join(folder, NAMES["loads"])
    el.printToXML(path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    tag = f'<ExternalLoads name="{ASSUMED_CONTACT}">'
    write_text_atomic(path, text.replace(tag, f"{tag}\n\t\t<!--{ASSUMED_CONTACT_NOTE}-->", 1))


def _setups(ex: SwingExport, folder: str) -> None:
    """ik_setup.xml (every marker of markers.trc a task of weight 1, the coordinates of
    ``ex.ik_hold`` pulled towards swing.mot, the whole fitted time range, coordinates
    kept in range by their clamping) and id_setup.xml (swing.mot
    with external_loads.xml, no filtering, muscles excluded), files by bare name."""
    t0, t1 = float(ex.t[0]), float(ex.t[-1])
    ik = opensim.InverseKinematicsTool()
    ik.setName("swing_ik")
    ik.set_model_file(NAMES["model"])
    ik.set_marker_file(NAMES["markers"])
    ik.set_output_motion_file("ik.mot")
    ik.set_results_directory(".")
    ik.set_time_range(0, t0)
    ik.set_time_range(1, t1)
    ik.set_report_errors(True)
    ik.set_accuracy(ex.ik_accuracy)
    if ex.ik_hold:
        ik.set_coordinate_file(NAMES["motion"])
    for name in ex.ik_hold:
        ct = opensim.IKCoordinateTask()
        ct.setName(name)
        ct.setWeight(ex.ik_hold_weight)
        ct.setApply(True)
        ct.setValueType(opensim.IKCoordinateTask.FromFile)
        ik.getIKTaskSet().cloneAndAppend(ct)
    for lab in ex.labels:
        task = opensim.IKMarkerTask()
        task.setName(lab)
        task.setWeight(1.0)
        task.setApply(True)
        ik.getIKTaskSet().cloneAndAppend(task)
    ik.printToXML(os.path.join(folder, NAMES["ik"]))
    idt = opensim.InverseDynamicsTool()
    idt.setName("swing_id")
    idt.setModelFileName(NAMES["model"])
    idt.setCoordinatesFileName(NAMES["motion"])
    idt.setExternalLoadsFileName(NAMES["loads"])
    idt.setLowpassCutoffFrequency(-1.0)
    idt.setStartTime(t0)
    idt.setEndTime(t1)
    idt.set_results_directory(".")
    idt.setOutputGenForceFileName("id.sto")
    ex_forces = opensim.ArrayStr()
    ex_forces.append("Muscles")
    idt.setExcludedForces(ex_forces)
    idt.printToXML(os.path.join(folder, NAMES["id"]))


def id_text(names: Sequence[str], rotational: Sequence[bool], t: NDArray[np.float64],
            tau: NDArray[np.float64]) -> str:
    """t (N,) s, tau (N, n) [N, N·m] as OpenSim's InverseDynamicsTool writes its result:
    a Storage file, columns ``<coordinate>_moment`` (rotational) or ``_force``."""
    cols = ["time"] + [f"{n}_{'moment' if r else 'force'}" for n, r in zip(names, rotational)]
    head = ["Inverse Dynamics Generalized Forces (the harness's)", "version=1",
            f"nRows={len(t)}", f"nColumns={len(cols)}", "inDegrees=no", "endheader",
            "\t".join(cols)]
    rows = ["\t".join(f"{x:.17g}" for x in (tk, *r)) for tk, r in zip(t, tau)]
    return "\n".join(head + rows) + "\n"


def write_swing_export(ex: SwingExport, folder: str, build_model: Callable[..., Any]) -> dict:
    """Write the export's files (``NAMES``) of ``ex`` to ``folder``; returns {key: path}
    and "coordinates": [names]. ``build_model`` the OpenSim adapter's, taking
    ``root_joint``."""
    _quiet()
    model, rot = _model(ex, build_model)
    model.initSystem()
    os.makedirs(folder, exist_ok=True)
    paths = {k: os.path.join(folder, v) for k, v in NAMES.items()}
    _print_atomic(model, paths["model"])
    write_text_atomic(paths["motion"], motion_text(ex.names, ex.t_motion, ex.Q, rot))
    write_text_atomic(paths["markers"], trc_text(ex.labels, ex.t, ex.Y, ex.rate_hz,
                                                  NAMES["markers"]))
    _loads(ex, folder)
    _setups(ex, folder)
    write_text_atomic(paths["inverse_dynamics"], id_text(ex.names, rot, ex.t, ex.tau))
    write_text_atomic(paths["notes"], "\n".join(ex.notes) + "\n")
    return paths | {"coordinates": list(ex.names)}
