"""The scaling of an OpenSim model file (.osim, OpenSim 4 layout) as OpenSim's ScaleTool
applies a set of body scale factors, done on the file's XML by the harness itself
(harness/track/scale.py decides the factors and places the markers).

Units: m, kg, kg·m² (inertia about the mass centre, body axes: Ixx Iyy Izz Ixy Ixz Iyz);
scale factors (sx, sy, sz) dimensionless, per body, along the body's axes.

What a body's factors s scale, as OpenSim's ``Model::scale`` does:

* the body's mass centre (× s element-wise) and inertia: × s² when the three are equal
  (to SimTK's numerical equality), else the inertia of a cylinder about its smallest
  principal moment with radius and length scaled (OpenSim's rule, kept as is); the mass ×
  sx·sy·sz unless the mass distribution is preserved; then, with a subject mass, every
  mass and inertia × (subject mass / total mass);
* every PhysicalOffsetFrame's translation on the body (a joint's parent and child
  frames): × s of the body it sits on;
* every marker's location: × s of its body;
* each CustomJoint's translation functions: wrapped in a ``MultiplierFunction`` whose
  scale is |axis| · s of the joint's parent body (an existing MultiplierFunction's scale
  multiplied), except a ``LinearFunction`` with coefficients exactly 1 and 0 (a
  translational degree of freedom, left as is).

Set aside, left as in the generic model (they do not enter the rigid-body dynamics the
harness compares): muscles and other forces (their path points, optimal fibre and tendon
slack lengths), wrap objects, contact and display geometry. Refused (BadInput naming the
file): an OpenSim 3 file, a frame or marker whose parent is not a body or the ground, a
CoordinateCouplerConstraint whose dependent coordinate translates, joints OpenSim scales
by other rules (EllipsoidJoint, ScapulothoracicJoint, ConstantCurvatureJoint).
"""
from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from harness.core.errors import BadInput
from harness.core.strict import parse_xml, read_xml
from harness.model.import_common import read_model_file

GROUND = "ground"
# SimTK::isNumericallyEqual's default tolerance, SignificantReal = ε^(7/8)
SIGNIFICANT = float(np.finfo(float).eps) ** 0.875
SCALED_ELSEWHERE = ("EllipsoidJoint", "ScapulothoracicJoint", "ConstantCurvatureJoint")


@dataclass(frozen=True)
class ModelMarker:
    """A marker: its body (or ``ground``), location [m] in the body frame, ``fixed``
    (kept where it is by the marker placement)."""
    name: str
    body: str
    location: tuple[float, float, float]
    fixed: bool


def _floats(text: str | None, n: int, where: str, what: str) -> NDArray[np.float64]:
    try:
        v = np.array([float(x) for x in (text or "").split()])
    except ValueError:
        raise BadInput(where, f"{what} {text!r} is not {n} numbers") from None
    if v.size != n:
        raise BadInput(where, f"{what} {text!r} is not {n} numbers")
    return v


def _num(v: Sequence[float] | NDArray[np.float64]) -> str:
    return " ".join(repr(float(x)) for x in v)


def load(path: str) -> tuple[ET.Element, str]:
    """(the ``<Model>`` element, the file's version) of the .osim at ``path`` (OpenSim 4
    layout)."""
    doc = parse_xml(path, read_model_file(path, ".osim").decode("utf-8", "replace"))
    model = doc.find("Model")
    if f"<{doc.tag}>" != "<OpenSimDocument>" or model is None:
        raise BadInput(path, "not an OpenSim model file (no <OpenSimDocument><Model>)")
    if int(float(doc.get("Version", "0"))) < 40000:
        raise BadInput(path, f"OpenSim file version {doc.get('Version')}: the scaling reads "
                       "the OpenSim 4 layout (40000 and later; OpenSim re-saves older files)")
    for tag in SCALED_ELSEWHERE:
        if model.find(f".//{tag}") is not None:
            raise BadInput(path, f"<{tag}>: OpenSim scales it by rules of its own, which the "
                           "harness's scaling does not support")
    return model, doc.get("Version", "40000")


def bodies(model: ET.Element) -> dict[str, ET.Element]:
    """{name: <Body>} of the model's BodySet."""
    return {b.get("name", ""): b for b in model.findall("./BodySet/objects/Body")}


def _owner(path_text: str, names: Mapping[str, object], where: str, what: str) -> str:
    """The body (or ``ground``) a socket path such as ``/bodyset/femur_r`` names."""
    last = path_text.strip().rstrip("/").split("/")[-1]
    if last == GROUND or last in names:
        return last
    raise BadInput(where, f"{what}: {path_text.strip()!r} is not a body or the ground "
                   "(frames on other frames are not supported by the scaling)")


def markers(model: ET.Element, where: str) -> list[ModelMarker]:
    """The markers of a ``<Model>`` or ``<MarkerSet>`` element: OpenSim 4's
    ``socket_parent_frame`` or OpenSim 3's ``<body>``."""
    names = bodies(model) if model.tag == "Model" else {}
    out = []
    for m in model.iter("Marker"):
        parent = m.findtext("socket_parent_frame") or m.findtext("body") or ""
        body = _owner(parent, names, where, f"marker {m.get('name')}") if names else \
            parent.strip().rstrip("/").split("/")[-1]
        loc = _floats(m.findtext("location", "0 0 0"), 3, where,
                      f"marker {m.get('name')}: <location>")
        fixed = (m.findtext("fixed") or "false").strip().lower() == "true"
        out.append(ModelMarker(m.get("name", ""), body, (loc[0], loc[1], loc[2]), fixed))
    return out


def marker_set_file(path: str) -> list[ModelMarker]:
    """The markers of a ``<MarkerSet>`` file (GenericModelMaker's marker_set_file)."""
    doc = read_xml(path, "a marker set file")
    mset = doc if doc.tag == "MarkerSet" else doc.find("MarkerSet")
    if mset is None:
        raise BadInput(path, "not a marker set file (no <MarkerSet> element)")
    return markers(mset, path)


def merge_markers(old: Sequence[ModelMarker], new: Sequence[ModelMarker]
                  ) -> list[ModelMarker]:
    """OpenSim's ``updateMarkerSet``: a new marker replaces the one of its name (removed,
    then appended), every other is appended; the old ones not replaced stay first."""
    names = {m.name for m in new}
    return [m for m in old if m.name not in names] + list(new)


def set_markers(model: ET.Element, ms: Sequence[ModelMarker]) -> None:
    """Replace the model's MarkerSet by ``ms`` (OpenSim 4 layout)."""
    for old in model.findall("MarkerSet"):
        model.remove(old)
    mset = ET.SubElement(model, "MarkerSet", name="markerset")
    objs = ET.SubElement(mset, "objects")
    for m in ms:
        el = ET.SubElement(objs, "Marker", name=m.name)
        ET.SubElement(el, "socket_parent_frame").text = \
            "/ground" if m.body == GROUND else f"/bodyset/{m.body}"
        ET.SubElement(el, "location").text = _num(m.location)
        ET.SubElement(el, "fixed").text = "true" if m.fixed else "false"
    ET.SubElement(mset, "groups")


def text(model: ET.Element, version: str) -> bytes:
    """The .osim file of a ``<Model>`` element (``version``: the document's Version)."""
    doc = ET.fromstring("<OpenSimDocument />")
    doc.set("Version", version)
    doc.append(model)
    ET.indent(doc, space="\t")
    out: bytes = ET.tostring(doc, encoding="UTF-8", xml_declaration=True)
    doc.remove(model)
    return out


def scaled_inertia(I6: NDArray[np.float64], mass: float, s: NDArray[np.float64],
                   scale_mass: bool) -> tuple[float, NDArray[np.float64]]:
    """(mass [kg], inertia (6,) [kg·m²]) of a body scaled by s (3,) as OpenSim's
    ``Body::scaleInertialProperties`` does (module docstring)."""
    k = abs(float(s[0] * s[1] * s[2]))
    m = mass * k if scale_mass else mass
    I = np.array([[I6[0], I6[3], I6[4]], [I6[3], I6[1], I6[5]], [I6[4], I6[5], I6[2]]])
    equal = all(abs(a - b) <= SIGNIFICANT * max(1.0, abs(a), abs(b))
                for a, b in ((s[0], s[1]), (s[1], s[2])))
    if m <= np.finfo(float).eps:
        I = I * 0.0
    elif equal:
        I = I * (k if scale_mass else 1.0) * (s[0] * s[0])
    else:
        d = np.diag(I)
        axis = (0 if d[0] <= d[2] else 2) if d[0] <= d[1] else (1 if d[1] <= d[2] else 2)
        oa = 1 if axis == 0 else 0
        term = 2.0 * d[axis] / mass
        r = np.sqrt(term) if term >= 0 else 0.0
        term = 12.0 * (d[oa] - 0.25 * mass * r * r) / mass
        length = (np.sqrt(term) if term >= 0 else 0.0) * s[axis]
        others = [i for i in range(3) if i != axis]
        r2 = r * s[others[0]] * r * s[others[1]]
        for i in range(3):
            I[i, i] = 0.5 * m * r2 if i == axis else m * (length * length / 12.0 + 0.25 * r2)
        for i, j in ((0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)):
            I[i, j] *= s[i] * s[j] * (k if scale_mass else 1.0)
    return m, np.array([I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])


def _translation_functions(model: ET.Element, names: Mapping[str, object],
                           factors: Mapping[str, NDArray[np.float64]], where: str) -> None:
    """Each CustomJoint's translation functions × |axis|·s of its parent body (wrapped in
    a MultiplierFunction; a LinearFunction 1·q + 0 left as is)."""
    for joint in model.iter("CustomJoint"):
        pname = (joint.findtext("socket_parent_frame") or "").strip()
        offsets = {f.get("name"): f for f in joint.findall("./frames/PhysicalOffsetFrame")}
        parent = offsets[pname].findtext("socket_parent", "") if pname in offsets else pname
        body = _owner(parent, names, where, f"joint {joint.get('name')}: parent frame")
        for ax in joint.findall("./SpatialTransform/TransformAxis"):
            if not (ax.get("name") or "").startswith("translation"):
                continue
            fn = [c for c in ax if c.tag not in ("coordinates", "axis")]
            if not fn:
                continue
            f = fn[0]
            if f.tag == "LinearFunction" and [float(x) for x in
                                              (f.findtext("coefficients") or "").split()
                                              ] == [1.0, 0.0]:
                continue
            a = _floats(ax.findtext("axis"), 3, where, f"joint {joint.get('name')} axis")
            k = float(np.abs(a) @ factors[body])
            if f.tag == "MultiplierFunction":
                sc = f.find("scale")
                old = float(sc.text or "1") if sc is not None else 1.0
                if sc is None:
                    sc = ET.SubElement(f, "scale")
                sc.text = repr(old * k)
                continue
            i = list(ax).index(f)
            ax.remove(f)
            mf = ET.Element("MultiplierFunction", name="function")
            inner = ET.SubElement(mf, "function")
            g = copy.deepcopy(f)
            g.attrib.pop("name", None)
            inner.append(g)
            ET.SubElement(mf, "scale").text = repr(k)
            ax.insert(i, mf)


def _no_translating_couplers(model: ET.Element, where: str) -> None:
    translating = set()
    for ax in model.iter("TransformAxis"):
        if (ax.get("name") or "").startswith("translation"):
            translating.update((ax.findtext("coordinates") or "").split())
    for j in model.iter("SliderJoint"):
        translating.update(c.get("name", "") for c in j.iter("Coordinate"))
    for c in model.iter("CoordinateCouplerConstraint"):
        dep = (c.findtext("dependent_coordinate_name") or "").strip()
        if dep in translating:
            raise BadInput(where, f"CoordinateCouplerConstraint {c.get('name')}: its "
                           f"dependent coordinate {dep} translates; scaling it is not "
                           "supported")


def apply(model: ET.Element, factors: Mapping[str, NDArray[np.float64]],
          preserve_mass: bool, subject_mass: float, where: str
          ) -> dict[str, tuple[float, NDArray[np.float64]]]:
    """Scale the ``<Model>`` in place by ``factors`` {body | ground: s (3,)} (module
    docstring; its markers are scaled by the caller: ``scale_markers``); {body: (mass [kg],
    inertia (6,) [kg·m²])} after."""
    names = bodies(model)
    _no_translating_couplers(model, where)
    for b, el in names.items():
        s = factors[b]
        mc = el.find("mass_center")
        if mc is not None:
            mc.text = _num(_floats(mc.text, 3, where, f"body {b}: <mass_center>") * s)
    for f in model.iter("PhysicalOffsetFrame"):
        body = _owner(f.findtext("socket_parent", ""), names, where,
                      f"frame {f.get('name')}: socket_parent")
        tr = f.find("translation")
        if tr is not None:
            tr.text = _num(_floats(tr.text, 3, where, f"frame {f.get('name')}") *
                           factors[body])
    _translation_functions(model, names, factors, where)
    out = {}
    for b, el in names.items():
        mass = float(el.findtext("mass", "0"))
        I6 = _floats(el.findtext("inertia", "0 0 0 0 0 0"), 6, where, f"body {b}: <inertia>")
        out[b] = scaled_inertia(I6, mass, factors[b], not preserve_mass)
    total = sum(m for m, _ in out.values())
    if subject_mass > 0 and total > 0:
        k = subject_mass / total
        out = {b: (m * k, I * k) for b, (m, I) in out.items()}
    for b, el in names.items():
        _set(el, "mass", repr(out[b][0]))
        _set(el, "inertia", _num(out[b][1]))
    return out


def _set(el: ET.Element, tag: str, value: str) -> None:
    found = el.find(tag)
    if found is None:
        found = ET.SubElement(el, tag)
    found.text = value


def scale_markers(ms: Sequence[ModelMarker], factors: Mapping[str, NDArray[np.float64]]
                  ) -> list[ModelMarker]:
    """Each marker's location × s of its body."""
    out = []
    for m in ms:
        loc = np.asarray(m.location) * factors[m.body]
        out.append(ModelMarker(m.name, m.body, (loc[0], loc[1], loc[2]), m.fixed))
    return out
