"""An OpenSim ScaleTool setup file (``<ScaleTool>``) read and checked for `harness track
--scale` (harness/track/scale.py carries it out): its GenericModelMaker (marker set file),
ModelScaler (scaling order, measurements, manual scales, static trial, time range, mass
distribution, subject mass) and MarkerPlacer (IK tasks, static trial, time range).

Units: kg (subject mass), s (time ranges), m (a marker file's units are the file's own);
scale factors dimensionless; IK weights as written.

Every file the setup names resolves against the setup file's folder (as OpenSim resolves
them). Refused with BadInput naming the setup and the problem: XML that is not well
formed, an element the scaling does not read (listed in ``ALLOWED``), a ``file=``
reference, a named file that does not exist, a time range that is not two increasing
numbers, a scaling order other than ``measurements`` / ``manualScale``, an
IKCoordinateTask with ``value_type from_file``, a MarkerPlacer ``coordinate_file``.
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from harness.core.errors import BadInput
from harness.core.strict import read_xml

# the elements read (or knowingly left aside: informational ones and output file names)
ALLOWED = {
    "ScaleTool": {"mass", "height", "age", "notes", "GenericModelMaker", "ModelScaler",
                  "MarkerPlacer"},
    "GenericModelMaker": {"model_file", "marker_set_file"},
    "ModelScaler": {"apply", "scaling_order", "MeasurementSet", "ScaleSet", "marker_file",
                    "time_range", "preserve_mass_distribution", "output_model_file",
                    "output_scale_file"},
    "MarkerPlacer": {"apply", "IKTaskSet", "marker_file", "coordinate_file", "time_range",
                     "output_motion_file", "output_model_file", "output_marker_file",
                     "max_marker_movement"},
}
UNSET = ("", "Unassigned")


@dataclass(frozen=True)
class Measurement:
    """One applied ``<Measurement>``: its marker pairs and the bodies (with the axes 0–2)
    its factor goes to."""
    name: str
    pairs: tuple[tuple[str, str], ...]
    bodies: tuple[tuple[str, tuple[int, ...]], ...]


@dataclass(frozen=True)
class ScaleSetup:
    """What the scaling reads from a ScaleTool setup; files as absolute paths or None."""
    path: str
    name: str
    mass_kg: float                      # ≤ 0: no subject mass (the masses are not adjusted)
    model_file: str | None              # as written; the command's MODEL is scaled instead
    marker_set_file: str | None
    scaler: bool
    order: tuple[str, ...]
    measurements: tuple[Measurement, ...]
    manual: tuple[tuple[str, tuple[float, float, float]], ...]
    scaler_trc: str | None
    scaler_range: tuple[float, float] | None
    preserve_mass: bool
    placer: bool
    weights: dict[str, float]
    coordinate_tasks: dict[str, tuple[float, str, float]]
    placer_trc: str | None
    placer_range: tuple[float, float] | None
    max_marker_movement: float         # in the .trc's units; ≤ 0: no limit (a warning only)


def _root(path: str) -> ET.Element:
    doc = read_xml(path, "a ScaleTool setup file")
    tool = doc if doc.tag == "ScaleTool" else doc.find("ScaleTool")
    if tool is None:
        raise BadInput(path, "not a ScaleTool setup (no <ScaleTool> element)")
    for el in doc.iter():
        if "file" in el.attrib:
            raise BadInput(path, f"<{el.tag} file={el.attrib['file']!r}>: elements read "
                           "from another file are not supported (write them in the setup)")
    return tool


def _check(path: str, el: ET.Element) -> None:
    """BadInput naming the first child of ``el`` the scaling does not read."""
    for child in el:
        if child.tag not in ALLOWED[el.tag]:
            raise BadInput(path, f"<{el.tag}> has <{child.tag}>, which the harness's "
                           "scaling does not support")


def _txt(el: ET.Element | None, tag: str, default: str = "") -> str:
    found = None if el is None else el.find(tag)
    return default if found is None or found.text is None else found.text.strip()


def _true(el: ET.Element | None, tag: str, default: bool) -> bool:
    v = _txt(el, tag, "true" if default else "false").lower()
    return v == "true"


def _number(path: str, text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise BadInput(path, f"{what} {text!r} is not a number") from None


def _file(path: str, el: ET.Element | None, tag: str) -> str | None:
    """The file ``<tag>`` names, resolved against the setup's folder; None when unset."""
    ref = _txt(el, tag)
    if ref in UNSET:
        return None
    target = os.path.join(os.path.dirname(os.path.abspath(path)), ref)
    if not os.path.isfile(target):
        raise BadInput(path, f"<{el.tag if el is not None else ''}><{tag}> {ref}: "
                       f"{target} does not exist")
    return target


def _range(path: str, el: ET.Element | None, section: str) -> tuple[float, float] | None:
    text = _txt(el, "time_range")
    if not text:
        return None
    parts = text.split()
    if len(parts) != 2:
        raise BadInput(path, f"<{section}><time_range> {text!r} is not two numbers")
    lo, hi = (_number(path, p, f"<{section}><time_range>") for p in parts)
    if hi < lo:
        raise BadInput(path, f"<{section}><time_range> {text!r} ends before it starts")
    return lo, hi


def _measurements(path: str, scaler: ET.Element | None) -> tuple[Measurement, ...]:
    out = []
    mset = None if scaler is None else scaler.find("MeasurementSet")
    for m in ([] if mset is None else mset.iter("Measurement")):
        if not _true(m, "apply", True):
            continue
        pairs = []
        for pair in m.iter("MarkerPair"):
            names = _txt(pair, "markers").split()
            if len(names) != 2:
                raise BadInput(path, f"Measurement {m.get('name')}: a MarkerPair names "
                               f"{len(names)} markers, not 2")
            pairs.append((names[0], names[1]))
        bodies = []
        for bs in m.iter("BodyScale"):
            axes = _txt(bs, "axes").upper().split()
            bad = [a for a in axes if a not in ("X", "Y", "Z")]
            if bad:
                raise BadInput(path, f"Measurement {m.get('name')}: BodyScale "
                               f"{bs.get('name')} axis {bad[0]!r} is not X, Y or Z")
            bodies.append((bs.get("name", ""), tuple("XYZ".index(a) for a in axes)))
        out.append(Measurement(m.get("name", ""), tuple(pairs), tuple(bodies)))
    return tuple(out)


def _manual(path: str, scaler: ET.Element | None
            ) -> tuple[tuple[str, tuple[float, float, float]], ...]:
    out = []
    sset = None if scaler is None else scaler.find("ScaleSet")
    for s in ([] if sset is None else sset.iter("Scale")):
        if not _true(s, "apply", True):
            continue
        v = [_number(path, x, f"Scale {_txt(s, 'segment')}: <scales>")
             for x in _txt(s, "scales").split()]
        if len(v) != 3:
            raise BadInput(path, f"Scale {_txt(s, 'segment')}: <scales> is not 3 numbers")
        out.append((_txt(s, "segment"), (v[0], v[1], v[2])))
    return tuple(out)


def _tasks(path: str, placer: ET.Element | None
           ) -> tuple[dict[str, float], dict[str, tuple[float, str, float]]]:
    """({marker: weight > 0}, {coordinate: (weight, value_type, value)}) of the applied
    IK tasks."""
    weights: dict[str, float] = {}
    coords: dict[str, tuple[float, str, float]] = {}
    tset = None if placer is None else placer.find("IKTaskSet")
    objs = None if tset is None else tset.find("objects")
    for task in ([] if objs is None else objs):
        name = task.get("name", "")
        w = _number(path, _txt(task, "weight", "1"), f"IK task {name}: <weight>")
        if not _true(task, "apply", True) or w <= 0:
            continue
        if task.tag == "IKMarkerTask":
            weights[name] = w
        elif task.tag == "IKCoordinateTask":
            kind = _txt(task, "value_type", "default_value")
            if kind not in ("default_value", "manual_value"):
                raise BadInput(path, f"IKCoordinateTask {name}: value_type {kind} is not "
                               "supported (default_value, manual_value)")
            coords[name] = (w, kind, _number(path, _txt(task, "value", "0"),
                                             f"IKCoordinateTask {name}: <value>"))
        else:
            raise BadInput(path, f"<IKTaskSet> has <{task.tag}>, which the harness's "
                           "scaling does not support")
    return weights, coords


def read_setup(path: str) -> ScaleSetup:
    """The ScaleTool setup at ``path`` (module docstring); BadInput on anything else."""
    tool = _root(path)
    _check(path, tool)
    gmm, scaler, placer = (tool.find(t) for t in ("GenericModelMaker", "ModelScaler",
                                                  "MarkerPlacer"))
    for el in (gmm, scaler, placer):
        if el is not None:
            _check(path, el)
    order = tuple(_txt(scaler, "scaling_order").split())
    bad = [o for o in order if o not in ("measurements", "manualScale")]
    if bad:
        raise BadInput(path, f"<scaling_order> {bad[0]!r} is neither measurements nor "
                       "manualScale")
    if _txt(placer, "coordinate_file") not in UNSET:
        raise BadInput(path, "<MarkerPlacer><coordinate_file> is not supported (the static "
                       "pose is solved from the markers and the coordinate tasks)")
    weights, coords = _tasks(path, placer)
    scaler_on = scaler is not None and _true(scaler, "apply", True)
    placer_on = placer is not None and _true(placer, "apply", True)
    s = ScaleSetup(
        path=path, name=tool.get("name", "") or "scaled",
        mass_kg=_number(path, _txt(tool, "mass", "-1"), "<mass>"),
        model_file=_txt(gmm, "model_file") or None,
        marker_set_file=_file(path, gmm, "marker_set_file"),
        scaler=scaler_on, order=order, measurements=_measurements(path, scaler),
        manual=_manual(path, scaler),
        scaler_trc=_file(path, scaler, "marker_file") if scaler_on else None,
        scaler_range=_range(path, scaler, "ModelScaler"),
        preserve_mass=_true(scaler, "preserve_mass_distribution", False),
        placer=placer_on, weights=weights, coordinate_tasks=coords,
        placer_trc=_file(path, placer, "marker_file") if placer_on else None,
        placer_range=_range(path, placer, "MarkerPlacer"),
        max_marker_movement=_number(path, _txt(placer, "max_marker_movement", "-1"),
                                      "<max_marker_movement>"))
    if s.scaler and "measurements" in s.order and s.measurements and s.scaler_trc is None:
        raise BadInput(path, "<ModelScaler> scales by measurements but names no "
                       "<marker_file>")
    if s.placer and s.placer_trc is None:
        raise BadInput(path, "<MarkerPlacer> applies but names no <marker_file>")
    if s.placer and s.placer_range is None:
        raise BadInput(path, "<MarkerPlacer> applies but has no <time_range>")
    return s
