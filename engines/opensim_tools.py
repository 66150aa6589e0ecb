"""OpenSim's own motion tools, run live for `harness track`'s side by side: the
InverseKinematicsTool on a model and its markers, the InverseDynamicsTool on a model, a
coordinate file and an ExternalLoads file; and the IK tool's InverseKinematicsSolver alone,
its solve timed apart from loading and writing (for bench/ik_gait2392.py).

Dimensions: F frames, n OpenSim coordinates (the model's, in its coordinate-set order).
Units: s, rad for rotational coordinates and m for translational ones (OpenSim's motion
files hold degrees; converted here), N and N·m for generalized forces, m for marker
errors.

Both tools are configured in code, never from a setup file: the IK tool with the marker
weights given (every other marker of the file left out), every coordinate's range clamped
(so the solver holds it as a bound, as the harness's IK does), accuracy 1e-5 (OpenSim's
default and the standard pipeline's); the ID tool with no low-pass filter (the coordinates
are splined as given, a natural quintic through every sample, the scheme the harness
applies to the same coordinates) and the model's muscles excluded (the canonical model
sets them aside).
"""
from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from harness.model.binding import Binding, console_as_warnings

BINDING = Binding("opensim")  # a missing binding is reported by the registry
with BINDING:
    import opensim

IK_ACCURACY = 1e-5
LOG = "opensim.tools"  # the tools' console lines, as warnings of this logger

# the model summary each tool prints when it runs (MODEL: name, coordinates: 23, …): no news
_SUMMARY = re.compile(r"^(MODEL|coordinates|forces|actuators|muscles|analyses|probes|bodies|"
                      r"joints|constraints|markers|controllers|contact geometries|"
                      r"misc modelcomponents):")
logging.getLogger(LOG).addFilter(lambda r: not _SUMMARY.match(r.getMessage()))


def _model(path: str, clamp: bool) -> Any:
    opensim.Logger.setLevelString("Warn")
    with console_as_warnings(LOG):
        model = opensim.Model(path)
    if clamp:
        cs = model.updCoordinateSet()
        for i in range(cs.getSize()):
            cs.get(i).setDefaultClamped(True)
    return model


def _columns(model: Any, table: Any, names: Sequence[str], in_degrees: bool
             ) -> np.ndarray:
    """(F, n) [rad | m] of ``names`` from an OpenSim table (degrees converted)."""
    cs = model.getCoordinateSet()
    out = np.empty((table.getNumRows(), len(names)))
    for k, n in enumerate(names):
        col = np.asarray(table.getDependentColumn(n).to_numpy(), float)
        rot = cs.get(n).getMotionType() == opensim.Coordinate.Rotational
        out[:, k] = np.radians(col) if (rot and in_degrees) else col
    return out


def coordinate_names(model_path: str) -> list[str]:
    """The model's coordinate names, in its coordinate-set order."""
    model = _model(model_path, clamp=False)
    cs = model.getCoordinateSet()
    return [cs.get(i).getName() for i in range(cs.getSize())]


def run_inverse_kinematics(model_path: str, trc_path: str, weights: Mapping[str, float],
                           t0: float, t1: float, out_dir: str,
                           coordinate_tasks: Mapping[str, tuple[float, str, float]] = {},
                           coordinate_file: str | None = None,
                           accuracy: float | None = None) -> dict[str, Any]:
    """OpenSim's InverseKinematicsTool over t0..t1 [s] of the .trc: {"names" (n,), "t"
    (F,) s, "q" (F, n) rad | m, "marker_rms_m" (F,), "marker_max_m" (F,) (OpenSim's own
    reported errors), "file" (the .mot it wrote), "settings" (str)}. Every coordinate
    clamped to its range; one IKMarkerTask per entry of ``weights`` (weight > 0); one
    IKCoordinateTask per entry of ``coordinate_tasks`` {name: (weight, "default_value" |
    "manual_value" | "from_file", value [rad | m])}, from_file reading
    ``coordinate_file``; ``accuracy`` the solver's (None: ``IK_ACCURACY``)."""
    accuracy = IK_ACCURACY if accuracy is None else float(accuracy)
    BINDING.require()
    model = _model(model_path, clamp=True)
    tool = opensim.InverseKinematicsTool()
    tool.setName("opensim")
    tool.setModel(model)
    tool.setMarkerDataFileName(str(trc_path))
    tool.setStartTime(float(t0))
    tool.setEndTime(float(t1))
    tool.set_accuracy(accuracy)
    tasks = tool.getIKTaskSet()
    for label, w in weights.items():
        task = opensim.IKMarkerTask()
        task.setName(label)
        task.setWeight(float(w))
        task.setApply(True)
        tasks.cloneAndAppend(task)
    for name, (w, kind, value) in coordinate_tasks.items():
        ct = opensim.IKCoordinateTask()
        ct.setName(name)
        ct.setWeight(float(w))
        ct.setApply(True)
        if kind == "manual_value":
            ct.setValueType(opensim.IKCoordinateTask.ManualValue)
            ct.setValue(float(value))
        elif kind == "from_file":
            ct.setValueType(opensim.IKCoordinateTask.FromFile)
        else:
            ct.setValueType(opensim.IKCoordinateTask.DefaultValue)
        tasks.cloneAndAppend(ct)
    if coordinate_file is not None:
        tool.set_coordinate_file(str(coordinate_file))
    tool.set_report_errors(True)
    tool.setResultsDir(str(out_dir))
    mot = os.path.join(out_dir, "opensim_ik.mot")
    tool.setOutputMotionFileName(mot)
    with console_as_warnings(LOG):
        ok = tool.run()
    if not ok:
        raise RuntimeError("OpenSim's InverseKinematicsTool.run() returned false")
    table = opensim.TimeSeriesTable(mot)
    names = coordinate_names(model_path)
    in_deg = table.getTableMetaDataAsString("inDegrees") == "yes"
    q = _columns(model, table, names, in_deg)
    t = np.asarray(table.getIndependentColumn(), float)
    err = opensim.TimeSeriesTable(os.path.join(out_dir, "opensim_ik_marker_errors.sto"))
    return {"names": names, "t": t, "q": q, "file": mot,
            "marker_rms_m": np.asarray(err.getDependentColumn("marker_error_RMS").to_numpy(),
                                       float),
            "marker_max_m": np.asarray(err.getDependentColumn("marker_error_max").to_numpy(),
                                       float),
            "settings": f"InverseKinematicsTool, accuracy {accuracy:g}, every coordinate "
                        f"clamped to its range, {len(weights)} weighted marker tasks, "
                        f"{len(coordinate_tasks)} coordinate tasks"}


def run_inverse_kinematics_solver(model_path: str, trc_path: str,
                                  weights: Mapping[str, float], times: Sequence[float],
                                  coordinate_tasks: Mapping[str, tuple[float, str, float]] = {}
                                  ) -> dict[str, Any]:
    """OpenSim's InverseKinematicsSolver (the solver inside the InverseKinematicsTool) on
    the frames at ``times`` (F,) s of the .trc, set up as ``run_inverse_kinematics`` sets
    up the tool (every coordinate clamped, the marker weights, the coordinate tasks,
    accuracy 1e-5; assembled at the first frame, then tracked frame to frame), nothing
    written: {"names" (n,), "t" (F,) s, "q" (F, n) rad | m, "solve_cpu_s" (the CPU time of
    the assemble and track calls alone, s), "settings" (str)}."""
    BINDING.require()
    model = _model(model_path, clamp=True)
    with console_as_warnings(LOG):
        state = model.initSystem()
    mw = opensim.SetMarkerWeights()
    for label, w in weights.items():
        mw.cloneAndAppend(opensim.MarkerWeight(label, float(w)))
    markers = opensim.MarkersReference(str(trc_path), mw)
    cs = model.getCoordinateSet()
    crefs = opensim.SimTKArrayCoordinateReference()
    for name, (w, kind, value) in coordinate_tasks.items():
        v = value if kind == "manual_value" else cs.get(name).getDefaultValue()
        ref = opensim.CoordinateReference(name, opensim.Constant(float(v)))
        ref.setWeight(float(w))
        crefs.push_back(ref)
    solver = opensim.InverseKinematicsSolver(model, markers, crefs)
    solver.setAccuracy(IK_ACCURACY)
    names = [cs.get(i).getName() for i in range(cs.getSize())]
    q = np.empty((len(times), len(names)))
    cpu = 0.0
    for f, t in enumerate(times):
        state.setTime(float(t))
        c0 = time.process_time()
        if f == 0:
            solver.assemble(state)
        else:
            solver.track(state)
        cpu += time.process_time() - c0
        q[f] = [cs.get(i).getValue(state) for i in range(len(names))]
    return {"names": names, "t": np.asarray(times, float), "q": q, "solve_cpu_s": cpu,
            "settings": f"InverseKinematicsSolver, accuracy {IK_ACCURACY:g}, every "
                        f"coordinate clamped to its range, {len(weights)} weighted markers, "
                        f"{len(coordinate_tasks)} coordinate tasks"}


def run_inverse_dynamics(model_path: str, coordinates_path: str, loads_path: str | None,
                         t0: float, t1: float, out_dir: str) -> dict[str, Any]:
    """OpenSim's InverseDynamicsTool over t0..t1 [s] on the coordinates file (.mot/.sto,
    unfiltered) with the ExternalLoads file (None: no loads): {"t" (F,) s, "labels" (n,)
    its column labels (``<coordinate>_moment`` N·m, ``<coordinate>_force`` N), "tau"
    (F, n), "file" (the .sto it wrote), "settings" (str)}."""
    BINDING.require()
    coordinates_path, coupled = _with_dependents(model_path, coordinates_path, out_dir)
    tool = opensim.InverseDynamicsTool()
    tool.setName("opensim")
    tool.setModelFileName(str(model_path))
    tool.setCoordinatesFileName(str(coordinates_path))
    if loads_path:
        tool.setExternalLoadsFileName(str(loads_path))
    tool.setLowpassCutoffFrequency(-1.0)
    tool.setStartTime(float(t0))
    tool.setEndTime(float(t1))
    excluded = opensim.ArrayStr()
    excluded.append("Muscles")
    tool.setExcludedForces(excluded)
    tool.setResultsDir(str(out_dir))
    tool.setOutputGenForceFileName("opensim_id.sto")
    with console_as_warnings(LOG):
        ok = tool.run()
    if not ok:
        raise RuntimeError("OpenSim's InverseDynamicsTool.run() returned false")
    table = opensim.TimeSeriesTable(os.path.join(out_dir, "opensim_id.sto"))
    labels = list(table.getColumnLabels())
    tau = np.stack([np.asarray(table.getDependentColumn(n).to_numpy(), float)
                    for n in labels], axis=1)
    settings = ("InverseDynamicsTool, no low-pass filter (coordinates splined as given: "
                "GCVSpline of degree 5, no smoothing), muscles excluded")
    for dep, ind, slope in coupled:
        d = [i for i, n in enumerate(labels) if n in (f"{dep}_moment", f"{dep}_force")]
        k = [i for i, n in enumerate(labels) if n in (f"{ind}_moment", f"{ind}_force")]
        if d and k:
            tau[:, k[0]] += slope * tau[:, d[0]]
            settings += (f"; {labels[d[0]]} (a CoordinateCouplerConstraint's dependent, "
                         f"which the tool does not project) added to {labels[k[0]]} times "
                         "the coupling's slope")
    return {"t": np.asarray(table.getIndependentColumn(), float), "labels": labels,
            "tau": tau, "file": os.path.join(out_dir, "opensim_id.sto"),
            "settings": settings}


def _with_dependents(model_path: str, coordinates_path: str, out_dir: str
                     ) -> tuple[str, list[tuple[str, str, np.ndarray]]]:
    """(the coordinates file to give the ID tool, [(dependent, independent, slope (F,))]).

    The InverseDynamicsTool sets a coordinate its file lacks to its default value and
    solves ignoring the constraints: the dependent coordinate of an enforced
    one-independent CoordinateCouplerConstraint would stand still. Each such dependent
    missing from the file is written beside the others, scale × f(independent) [rad | m],
    and its slope scale × f'(independent) returned, so its generalized force can be
    carried onto the independent coordinate as the constraint would."""
    model = _model(model_path, clamp=False)
    table = opensim.TimeSeriesTable(str(coordinates_path))
    have = set(table.getColumnLabels())
    in_deg = table.getTableMetaDataAsString("inDegrees") == "yes" \
        if table.hasTableMetaDataKey("inDegrees") else False
    cs, out = model.getCoordinateSet(), []
    cons = model.getConstraintSet()
    for i in range(cons.getSize()):
        cc = opensim.CoordinateCouplerConstraint.safeDownCast(cons.get(i))
        if cc is None or not cons.get(i).get_isEnforced():
            continue
        ind_names = cc.getIndependentCoordinateNames()
        dep = cc.getDependentCoordinateName()
        if ind_names.getSize() != 1 or dep in have or ind_names.get(0) not in have:
            continue
        ind = ind_names.get(0)
        x = np.asarray(table.getDependentColumn(ind).to_numpy(), float)
        rot = cs.get(ind).getMotionType() == opensim.Coordinate.Rotational
        x = np.radians(x) if (rot and in_deg) else x
        fn = cc.getFunction()
        s = float(opensim.PropertyHelper.getValueDouble(cc.getPropertyByName("scale_factor")))
        y = np.array([s * fn.calcValue(opensim.Vector(1, float(v))) for v in x])
        # the derivative order as a Python list, never an opensim.StdVectorInt: OpenSim and
        # ezc3d register SWIG's std::vector<int> under one name, and building one breaks
        # the other module's in the same process (a list is converted without the proxy)
        slope = np.array([s * fn.calcDerivative([0], opensim.Vector(1, float(v)))
                          for v in x])
        dep_rot = cs.get(dep).getMotionType() == opensim.Coordinate.Rotational
        table.appendColumn(dep, opensim.Vector(np.degrees(y) if (dep_rot and in_deg) else y))
        out.append((dep, ind, slope))
    if not out:
        return coordinates_path, out
    path = os.path.join(out_dir, "coordinates_with_dependents.sto")
    opensim.STOFileAdapter.write(table, path)
    return path, out


def model_mass_properties(model_path: str) -> dict[str, Any]:
    """The mass properties as OpenSim reads the model file: {"total_mass_kg", "bodies":
    {name: {"mass_kg", "com_m" (3,) in the body's frame, "inertia_kgm2" (6,) Ixx Iyy Izz
    Ixy Ixz Iyz about the mass centre}}}."""
    BINDING.require()
    model = _model(model_path, clamp=False)
    with console_as_warnings(LOG):
        state = model.initSystem()
    bodies = {}
    bs = model.getBodySet()
    for i in range(bs.getSize()):
        b = bs.get(i)
        c, inertia = b.getMassCenter(), b.getInertia()
        moments, products = inertia.getMoments(), inertia.getProducts()
        bodies[b.getName()] = {"mass_kg": b.getMass(), "com_m": [c.get(k) for k in range(3)],
                               "inertia_kgm2": [moments.get(k) for k in range(3)]
                               + [products.get(k) for k in range(3)]}
    return {"total_mass_kg": model.getTotalMass(state), "bodies": bodies}


def _scale_geometry(model: Any) -> dict[str, list[tuple[np.ndarray, np.ndarray]]]:
    """{body: [(point (3,) m, ...)]}: what scaling multiplies on each body, in order: its
    mass centre, the translations of the joint frames on it, its markers' locations."""
    out: dict[str, list[Any]] = {}
    bs = model.getBodySet()
    for i in range(bs.getSize()):
        b = bs.get(i)
        out.setdefault(b.getName(), []).append(np.array(b.getMassCenter().to_numpy()))
    js = model.getJointSet()
    for i in range(js.getSize()):
        for f in (js.get(i).getParentFrame(), js.get(i).getChildFrame()):
            off = opensim.PhysicalOffsetFrame.safeDownCast(f)
            if off is not None:
                base = off.getParentFrame().findBaseFrame().getName()
                out.setdefault(base, []).append(np.array(off.get_translation().to_numpy()))
    ms = model.getMarkerSet()
    for i in range(ms.getSize()):
        m = ms.get(i)
        out.setdefault(m.getParentFrame().findBaseFrame().getName(), []).append(
            np.array(m.get_location().to_numpy()))
    return out


def _factors(before: dict[str, list[np.ndarray]], after: dict[str, list[np.ndarray]]
             ) -> dict[str, list[float | None]]:
    """{body: [sx, sy, sz]} read off the scaled geometry: per axis, the scaled over the
    generic coordinate of the point farthest out along it (None: no point off the axis)."""
    out: dict[str, list[float | None]] = {}
    for body, pts in before.items():
        if body == "ground" or body not in after:
            continue
        a, b = np.array(pts), np.array(after[body])
        row: list[float | None] = []
        for k in range(3):
            i = int(np.argmax(np.abs(a[:, k])))
            row.append(float(b[i, k] / a[i, k]) if a[i, k] != 0 else None)
        out[body] = row
    return out


def _bodies_and_markers(model: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """({body: {"mass_kg", "inertia" (6,) kg·m²}}, {marker: {"body", "location_m"}})."""
    bodies, markers = {}, {}
    bs = model.getBodySet()
    for i in range(bs.getSize()):
        b = bs.get(i)
        I = b.getInertia()
        bodies[b.getName()] = {"mass_kg": float(b.getMass()),
                               "inertia": [*np.array(I.getMoments().to_numpy()).tolist(),
                                           *np.array(I.getProducts().to_numpy()).tolist()]}
    ms = model.getMarkerSet()
    for i in range(ms.getSize()):
        m = ms.get(i)
        markers[m.getName()] = {"body": m.getParentFrame().findBaseFrame().getName(),
                                "location_m": np.array(m.get_location().to_numpy()).tolist()}
    return bodies, markers


def run_scale_tool(setup_path: str, model_path: str, out_dir: str) -> dict[str, Any]:
    """OpenSim's ScaleTool on its setup file, the generic model being ``model_path`` (the
    setup's own ``model_file`` replaced), its steps run as ``ScaleTool.run`` runs them
    (GenericModelMaker, ModelScaler, MarkerPlacer, each when it applies) with no file
    written but the placed model, ``out_dir``/opensim_scaled_placed.osim: {"scale_factors"
    {body: [sx, sy, sz]} (read off the scaled model's geometry: its scale-set file holds 6
    digits), "bodies" {body: {"mass_kg", "inertia"}}, "markers" {name: {"body",
    "location_m"}} after placement, "static_pose" {coordinate: value rad | m} (None when
    no placement), "file", "wall_s", "settings"}."""
    BINDING.require()
    opensim.Logger.setLevelString("Warn")
    w0 = time.perf_counter()
    with console_as_warnings(LOG):
        tool = opensim.ScaleTool(str(setup_path))
        tool.getGenericModelMaker().setModelFileName(os.path.abspath(model_path))
        path = tool.getPathToSubject()
        model = tool.createModel()
        if model is None:
            raise RuntimeError("OpenSim's ScaleTool could not create the generic model")
        before = _scale_geometry(model)
        scaler, placer = tool.getModelScaler(), tool.getMarkerPlacer()
        scaler.setPrintResultFiles(False)
        placer.setPrintResultFiles(False)
        if not tool.isDefaultModelScaler() and scaler.getApply():
            if not scaler.processModel(model, path, tool.getSubjectMass()):
                raise RuntimeError("OpenSim's ModelScaler.processModel returned false")
        factors = _factors(before, _scale_geometry(model))
        pose = None
        if not tool.isDefaultMarkerPlacer() and placer.getApply():
            if not placer.processModel(model, path):
                raise RuntimeError("OpenSim's MarkerPlacer.processModel returned false")
            st = placer.getOutputStorage()
            labels = st.getColumnLabels()
            data = st.getStateVector(0).getData()
            pose = {labels.get(i + 1).split("/")[-2]: float(data.get(i))
                    for i in range(data.getSize())
                    if labels.get(i + 1).endswith("/value")}
        bodies, markers = _bodies_and_markers(model)
        out = os.path.join(out_dir, "opensim_scaled_placed.osim")
        model.printToXML(out)
    return {"scale_factors": factors, "bodies": bodies, "markers": markers,
            "static_pose": pose, "file": out, "wall_s": time.perf_counter() - w0,
            "settings": "ScaleTool (GenericModelMaker, ModelScaler, MarkerPlacer as the "
                        "setup applies them; the MarkerPlacer's IK at its default "
                        "accuracy), the command's model as the generic model"}
