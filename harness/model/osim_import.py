"""OpenSim model file (.osim) → FixtureSpec, so an OpenSim model takes the fixtures' path
to every engine (exported to URDF and MJCF like any other model).

Units: SI as OpenSim holds them — m, kg, kg·m² (inertia about the centre of mass, body
axes), rad. Engine-blind: OpenSim itself parses the file (``opensim.Model(path)`` and
``initSystem``) in the adapter whose class provides ``osim_to_spec`` (reached through the
registry); here are the file checks, the model name and ``FixtureSpec.validate``.

What becomes what (docs/osim.md):

* Body → Body: mass, mass_center, inertia (about the com, body axes).
* Each joint X_AB(q) = X_AF · X_FM(q) · X_MB (offset frames F on the parent, M on the
  child): PinJoint → revolute about F's z, SliderJoint → prismatic along F's x, BallJoint
  → ball, WeldJoint → fixed, GimbalJoint (x, y, z) and UniversalJoint (x, y) → revolute
  joints, FreeJoint (the one joint from the ground only) → the floating root,
  CustomJoint → a chain of revolute/prismatic joints through massless bodies
  ``<child>__<coordinate>`` (translations first, along F's axes, then the rotations about
  body-fixed axes, as OpenSim composes them); intercepts and constants go into the
  placements, a slope s gives the axis sign(s)·a and the canonical coordinate |s|·q. A
  coordinate's joint is its first LinearFunction axis; any other axis it drives (a
  second LinearFunction, a SimmSpline, a PolynomialFunction, a MultiplierFunction of
  them) is a joint ``<joint>_<axis>`` of its own held by a joint coupling (spec
  Coupling), as is the dependent coordinate of a CoordinateCouplerConstraint.
  Moving joints are named after their OpenSim coordinate (a ball joint after its joint).
* Markers → named frames on their body; gravity; the model's name.
* An enforced PointConstraint → a ``point`` loop (spec Constraint) between two named
  frames at its points (a frame already named there, else ``<constraint>_point_1|2``).
* A coordinate's ``default_value`` is OpenSim's initial pose only (noted): the canonical
  neutral is q = 0. A ``locked`` coordinate becomes a weld at its default value (noted);
  a locked ball-joint coordinate is refused. Ranges become limits only when ``clamped``
  (or, with ``ranges_as_limits``, always: `harness track`).
* Set aside with a note (they do not enter M or h): muscles, wrap objects, actuators,
  contact geometry, controllers, forces with appliesForce false, constraints not enforced.

Refused (BadInput naming the file and the element): any other force element, an enforced
constraint other than a CoordinateCouplerConstraint or a PointConstraint, a prescribed coordinate, a
CustomJoint axis that is a function of several coordinates or of a coordinate that
drives no axis linearly and follows no other, other coupling functions, other joint
types (Planar, Ellipsoid, …), a FreeJoint that is not the one joint from the ground, a
joint whose child frame is on the ground, ``floating`` on a model not hung from the
ground by one WeldJoint, a non-physical inertia (unless ``repair_inertia``), anything
OpenSim cannot load.
"""
from __future__ import annotations

import dataclasses
import os
import re

from harness.core.errors import BadInput
from harness.core.spec import FixtureSpec, inertia_problem, repair_inertia
from harness.core.strict import MAX_BODIES, holds_warnings, referenced_file_problem
from harness.model import registry
from harness.model.import_common import read_model_file, sanitise_model_name


@holds_warnings
def load_osim_with_notes(path: str, floating: bool = False,
                         repair_inertia: bool = False, ranges_as_limits: bool = False
                         ) -> tuple[FixtureSpec, list[str]]:
    """(FixtureSpec, notes): the .osim at ``path`` [SI units] as a validated spec, and one
    line per change the import made. BadInput(path, problem) for unsupported content; a
    body's non-physical inertia is refused, or with ``repair_inertia`` replaced by the
    nearest physical one (noted). ``ranges_as_limits``: every coordinate's range is its
    joint's limits, clamped in the file or not (noted)."""
    path = str(path)
    raw = read_model_file(path, ".osim")
    text = re.sub(rb"<!--.*?-->", b"", raw, flags=re.S)
    if b"<OpenSimDocument" not in text:
        raise BadInput(path, "not an OpenSim model file (no <OpenSimDocument> element)")
    bodies = len(re.findall(rb"<Body[\s>/]", text))
    if bodies > MAX_BODIES:
        raise BadInput(path, f"{bodies} <Body> elements: the harness supports at most "
                             f"{MAX_BODIES} bodies per model (harness/core/strict.py)")

    ref_notes = _referenced_files(path, text)  # before OpenSim opens any of them
    reader = registry.adapter_class(registry.providing("osim_to_spec")[0])
    read: tuple[FixtureSpec, list[str]] = (
        reader.osim_to_spec(path, floating, ranges_as_limits=True) if ranges_as_limits
        else reader.osim_to_spec(path, floating))
    spec, notes = read
    notes = [*notes, *ref_notes]
    spec = _physical(path, spec, repair_inertia, notes)
    spec = dataclasses.replace(
        spec, name=sanitise_model_name(spec.name, path), source=path,
        description=f"OpenSim model {spec.name or '(unnamed)'} imported from "
                    f"{os.path.basename(path)}")
    return spec.validate(where=path), notes


def _physical(path: str, spec: FixtureSpec, repair: bool, notes: list[str]) -> FixtureSpec:
    """``spec`` with each body's non-physical inertia [kg·m²] replaced by the nearest
    physical one (``repair``, one note per body), else BadInput naming every such body."""
    bad, bodies = [], []
    for b in spec.bodies:
        problem = inertia_problem(b.inertia_matrix) if b.mass > 0 else ""
        if problem and repair:
            I = repair_inertia(b.inertia_matrix)
            notes.append(f"body {b.name}: {problem}; replaced by the nearest physical inertia "
                         "(--repair-inertia)")
            b = dataclasses.replace(b, inertia=tuple(float(x) for x in I.reshape(-1)))
        elif problem:
            bad.append(f"body {b.name}: {problem}")
        bodies.append(b)
    if bad:
        raise BadInput(path, "; ".join(bad) + "; --repair-inertia replaces "
                       + ("it" if len(bad) == 1 else "each") + " by the nearest physical inertia")
    return dataclasses.replace(spec, bodies=tuple(bodies))


_FILE_ATTR = re.compile(rb"""<([A-Za-z_][\w.-]*)[^>]*?\sfile\s*=\s*(?:"([^"]*)"|'([^']*)')""")


def _referenced_files(path: str, text: bytes) -> list[str]:
    """Notes on the files the .osim names with ``file=`` (OpenSim reads the element from
    that file, relative to the .osim's folder). BadInput naming the .osim and the reference
    if one is not a regular file (a FIFO would hang OpenSim's reader; a device, a folder
    is no model file) or is over the model-file size limit. A missing file, or content
    OpenSim cannot parse, is dropped by OpenSim without a message: said in a note."""
    notes: list[str] = []
    base = os.path.dirname(os.path.abspath(path))
    for m in _FILE_ATTR.finditer(text):
        element = m.group(1).decode("utf-8", "replace")
        ref = (m.group(2) if m.group(2) is not None else m.group(3) or b"").decode(
            "utf-8", "replace").strip()
        if not ref:
            continue
        target = os.path.join(base, ref)
        problem = referenced_file_problem(target)
        if problem:
            raise BadInput(path, f"<{element} file={ref!r}>: {target} {problem}")
        if not os.path.exists(target):
            notes.append(f"<{element} file={ref!r}>: {target} does not exist; OpenSim drops "
                         "the reference without a message (the element keeps only what the "
                         ".osim itself holds)")
        else:
            notes.append(f"<{element} file={ref!r}>: OpenSim reads this element from {target}; "
                         "anything there it cannot parse is dropped without a message")
    return notes


def load_osim(path: str, floating: bool = False) -> FixtureSpec:
    """The .osim at ``path`` [SI units] as a validated FixtureSpec; BadInput(path,
    problem) on error."""
    return load_osim_with_notes(path, floating)[0]
