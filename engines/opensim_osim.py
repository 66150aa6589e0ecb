""".osim models in and out, read and written by OpenSim itself.

Units: SI as OpenSim holds them — m, kg, kg·m² (inertia about the centre of mass, body
axes), rad; poses are 4x4 homogeneous X_AB (frame B in frame A).

* ``osim_to_spec(path, floating)`` → (FixtureSpec, notes): the model as ``opensim.Model``
  parses it (after ``initSystem``), converted to the canonical tree (harness/core/spec.py).
  Not validated here: harness/model/osim_import.py does that, naming the file.
* ``write_osim(spec, path, build_model)``: the canonical model as an .osim file (the
  OpenSim adapter's ``build_model``, passed in, then ``printToXML``), written atomically.
* ``motion_text`` (OpenSim's storage format, rotations in degrees, ``inDegrees=yes``) and
  ``trc_text`` (markers, mm): the swing export's motion and marker files
  (engines/opensim_swing.py).

An OpenSim joint joins a frame F on the parent body A (X_AF, an offset frame or the body)
and a frame M on the child body B (X_BM): X_AB(q) = X_AF · X_FM(q) · X_MB. X_FM is a
rotation about F's z (PinJoint), a translation along F's x (SliderJoint), a rotation
about F's origin (BallJoint, FreeJoint with a translation; GimbalJoint Rx Ry Rz,
UniversalJoint Rx Ry), the identity (WeldJoint), or, for a CustomJoint,
Trans(Σ f_k(q) a_k) · R(a_1, f_1(q)) R(a_2, f_2(q)) R(a_3, f_3(q)) (three rotations about
body-fixed axes, then translations along F's axes). An axis that is not its coordinate's
first LinearFunction axis is a joint ``<joint>_<axis>`` of its own, coupled to the
coordinate's joint (``_couplings``: spec Coupling, linear or a spline / polynomial).

Each moving element (an axis and its coordinate) becomes one canonical joint; a joint of
several elements a chain of massless bodies ``<child>__<coordinate>``; the constant parts
(offset frames, constant functions, intercepts) become the placements between them. The
last element is folded into the child body when that is exact (a rotation whose axis
passes through B's origin, any translation), else a weld ``<child>__fixed`` holds B.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.core.conventions import matrix_to_rpy
from harness.core.errors import BadInput
from harness.core.io import write_bytes_atomic
from harness.core.spec import (
    COUPLING_NOTE,
    WORLD_BODY,
    Body,
    Constraint,
    Coupling,
    FixtureSpec,
    Frame,
    Joint,
)
from harness.model.binding import Binding, console_as_warnings

BINDING = Binding("opensim")  # a missing binding is reported by the registry
with BINDING:
    import opensim

# forces that carry no state-dependent load of their own in stages 0-2: set aside
_ACTUATORS = ("CoordinateActuator", "PointActuator", "TorqueActuator",
              "ActivationCoordinateActuator")


def _mat(T) -> np.ndarray:
    """4x4 numpy pose of a SimTK Transform."""
    out = np.eye(4)
    R, p = T.R(), T.p()
    for i in range(3):
        out[i, 3] = p.get(i)
        for j in range(3):
            out[i, :3][j] = R.get(i, j)
    return out


def _rot(axis, angle) -> np.ndarray:
    """4x4 rotation by ``angle`` [rad] about the unit ``axis``."""
    a = np.asarray(axis, dtype=float)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    out = np.eye(4)
    out[:3, :3] = np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K
    return out


def _trans(p) -> np.ndarray:
    out = np.eye(4)
    out[:3, 3] = p
    return out


def _inv(X) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = X[:3, :3].T
    out[:3, 3] = -X[:3, :3].T @ X[:3, 3]
    return out


def _vec3(v) -> np.ndarray:
    return np.array([v.get(0), v.get(1), v.get(2)], dtype=float)


def _quiet():
    """OpenSim's log down to warnings (it prints every model it loads)."""
    opensim.Logger.setLevelString("Warn")


def _load(path: str, bad):
    BINDING.require()
    _quiet()
    try:
        with console_as_warnings("opensim"):  # its log lines counted as warnings
            model = opensim.Model(path)
            model.finalizeConnections()
            state = model.initSystem()
    except Exception as e:  # OpenSim raises RuntimeError (or its own) for any bad file
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise bad(f"OpenSim cannot load it: {first}") from None
    return model, state


def _pose(frame) -> tuple:
    """(base body name, X_base_frame (4, 4) [m]) of an OpenSim physical frame."""
    base = frame.findBaseFrame().getName()
    return base, _mat(frame.findTransformInBaseFrame())


def _rpy(X) -> tuple:
    return tuple(float(x) + 0.0 for x in matrix_to_rpy(X[:3, :3]))


def _xyz(X) -> tuple:
    return tuple(float(x) + 0.0 for x in X[:3, 3])


def osim_to_spec(path: str, floating: bool = False, ranges_as_limits: bool = False
                 ) -> tuple[FixtureSpec, list[str]]:
    """(FixtureSpec, notes) of the .osim at ``path`` as OpenSim parses it [SI: m, kg,
    kg·m², rad]; BadInput(path, problem) for content the canonical model cannot carry
    (harness/model/osim_import.py lists what is read, set aside and refused).
    ``ranges_as_limits``: every coordinate's range becomes its joint's limits, clamped or
    not (noted)."""
    path = str(path)

    def bad(problem: str) -> BadInput:
        return BadInput(path, problem)

    model, _ = _load(path, bad)
    notes: list = []
    if ranges_as_limits:
        cs = model.updCoordinateSet()
        unclamped = [cs.get(i) for i in range(cs.getSize()) if not cs.get(i).getDefaultClamped()]
        for c in unclamped:
            c.setDefaultClamped(True)
        if unclamped:
            notes.append(f"{len(unclamped)} coordinate range(s) held as joint limits although "
                         "not clamped in the file")
    damping, springs = _set_aside(model, notes, bad)
    _check_coordinates(model, notes, bad)
    ground = model.getGround().getName()
    bodies = _bodies(model)
    joints_in = list(model.getJointSet())
    is_floating, keep_world = _root(joints_in, ground, floating, notes, bad)
    couplers = _couplers(model, bad)
    deps: list = []
    joints, extra, scaled = _joints(joints_in, ground, keep_world, notes, bad,
                                    (couplers, deps))
    couplings = _couplings(joints, couplers, deps, scaled, notes, bad)
    if keep_world:
        if any(b.name == WORLD_BODY for b in bodies):
            raise bad(f"a body named {WORLD_BODY!r} already exists; the importer needs that "
                      "name for the ground it keeps")
        notes.append(f"the ground is kept as the massless root body {WORLD_BODY!r}")
    bodies = ([Body(WORLD_BODY, 0.0)] if keep_world else []) + bodies + \
        [Body(n, 0.0) for n in extra]

    joints = _with_damping(joints, damping, scaled, model, notes, bad)
    joints = _with_springs(joints, springs, scaled, bad)
    frames = _frames(model, ground, keep_world, notes)
    constraints = _points(model, ground, keep_world, frames, notes, bad)
    g = _vec3(model.getGravity())
    spec = FixtureSpec(name=model.getName(), bodies=tuple(bodies), joints=tuple(joints),
                       frames=tuple(frames), gravity=tuple(float(x) for x in g),
                       floating=is_floating, source=path, couplings=tuple(couplings),
                       constraints=tuple(constraints))
    return spec, notes


def _check_coordinates(model, notes: list, bad) -> None:
    """BadInput for a prescribed coordinate; a note for a default value that is not 0."""
    for c in model.getCoordinateSet():
        if c.get_prescribed():
            raise bad(f"coordinate {c.getName()} is prescribed (a driven motion): not "
                      "supported")
        if c.getDefaultValue() != 0 and not c.getDefaultLocked():
            notes.append(f"coordinate {c.getName()}: default_value {c.getDefaultValue()!r} "
                         "is OpenSim's initial pose only; the canonical neutral is q = 0")


def _bodies(model) -> list:
    """[Body] of the model's BodySet [kg, m, kg·m² about the com, body axes]."""
    bodies = []
    for b in model.getBodySet():
        I = b.getInertia()
        mo, pr = _vec3(I.getMoments()), _vec3(I.getProducts())
        Im = np.array([[mo[0], pr[0], pr[1]], [pr[0], mo[1], pr[2]], [pr[1], pr[2], mo[2]]])
        bodies.append(Body(b.getName(), float(b.getMass()),
                           tuple(float(x) for x in _vec3(b.getMassCenter())),
                           tuple(float(x) for x in Im.reshape(-1))))
    return bodies


def _root(joints_in: list, ground: str, floating: bool, notes: list, bad) -> tuple:
    """(is_floating, keep_world) of the joints from the ground: one FreeJoint (floating),
    or, with ``floating``, one WeldJoint replaced by the free root; the ground is kept as
    ``world_`` unless the root hangs from it by one identity weld."""
    on_ground = [j for j in joints_in if _pose(j.getParentFrame())[0] == ground]
    free = [j for j in joints_in if j.getConcreteClassName() == "FreeJoint"]
    if free and not (len(free) == 1 and len(on_ground) == 1
                     and on_ground[0].getName() == free[0].getName()):
        raise bad(f"FreeJoint {free[0].getName()}: a free joint is supported only as the one "
                  "joint from the ground (the floating root)")
    one_weld = len(on_ground) == 1 and on_ground[0].getConcreteClassName() == "WeldJoint"
    is_floating = bool(free) or bool(floating)
    if free and not floating:
        notes.append(f"FreeJoint {free[0].getName()}: the model is imported as floating")
    if is_floating and not free:
        if not one_weld:
            raise bad("with floating, the model must hang from the ground by one WeldJoint "
                      "(found " + (", ".join(f"{j.getConcreteClassName()} {j.getName()}"
                                             for j in on_ground[:3]) or "none") + ")")
        notes.append(f"WeldJoint {on_ground[0].getName()}: replaced by the free root joint "
                     "(its pose is dropped)")
    keep_world = not is_floating and not (
        one_weld and np.array_equal(_weld_pose(on_ground[0], _pose), np.eye(4)))
    return is_floating, keep_world


def _joints(joints_in: list, ground: str, keep_world: bool, notes: list, bad,
            coupled: tuple) -> tuple:
    """(canonical joints, new massless bodies, {coordinate: |slope|} of scaled ones) of
    the model's joints; the free root (or the root's identity weld) is skipped.
    ``coupled``: (the CoordinateCouplerConstraints ``_couplers``, the list ``_elements``
    adds the coupled axes to)."""
    joints, extra, scaled = [], [], {}
    for j in joints_in:
        kind, name = j.getConcreteClassName(), j.getName()
        pbase, X_AF = _pose(j.getParentFrame())
        cbase, X_BM = _pose(j.getChildFrame())
        if cbase == ground:
            raise bad(f"{kind} {name}: its child frame is on the ground (a reversed joint): "
                      "not supported")
        if pbase == ground and not keep_world:  # the free root, or the root's identity weld
            locked = [j.get_coordinates(i).getName() for i in range(j.numCoordinates())
                      if j.get_coordinates(i).getDefaultLocked()]
            if locked:
                raise bad(f"{kind} {name}: coordinate {locked[0]} is locked: a locked free "
                          "root is not supported")
            if kind == "FreeJoint" and not (np.array_equal(X_AF, np.eye(4))
                                            and np.array_equal(X_BM, np.eye(4))):
                notes.append(f"FreeJoint {name}: its offset frames are dropped (the free "
                             "root joint sets the root body's pose)")
            continue
        parent = WORLD_BODY if pbase == ground else pbase
        elements = _elements(j, kind, bad, coupled)
        js, new = _chain(name, parent, cbase, X_AF, elements, _inv(X_BM), _rpy, _xyz, Joint,
                         notes, scaled)
        joints += js
        extra += new
    return joints, extra, scaled


def _frames(model, ground: str, keep_world: bool, notes: list) -> list:
    """[Frame] [m, rad] of the offset frames the bodies own and of the markers (a marker
    on the ground goes to ``world_``, or is dropped with a note when it is not kept)."""
    frames = []
    for comp in model.getComponentsList():  # offset frames a body owns: named frames
        off = opensim.PhysicalOffsetFrame.safeDownCast(comp)
        if off is None or opensim.Body.safeDownCast(off.getOwner()) is None:
            continue
        base, X = _pose(off)
        frames.append(Frame(off.getName(), base, _xyz(X), _rpy(X)))
    for mk in model.getMarkerSet():
        base, X = _pose(mk.getParentFrame())
        p = X[:3, :3] @ _vec3(mk.get_location()) + X[:3, 3]
        if base == ground:
            if not keep_world:
                notes.append(f"marker {mk.getName()} is on the ground: dropped")
                continue
            base = WORLD_BODY
        frames.append(Frame(mk.getName(), base, tuple(float(x) + 0.0 for x in p)))
    return frames


def _points(model, ground: str, keep_world: bool, frames: list, notes: list, bad
            ) -> list:
    """[Constraint] [m] of the enforced PointConstraints: kind ``point`` between two named
    frames at the constraint's points (a frame already named on the same body at the same
    point, else one added to ``frames`` as ``<constraint>_point_1`` / ``_point_2``)."""
    out = []
    for c in model.getConstraintSet():
        pc = opensim.PointConstraint.safeDownCast(c)
        if pc is None or not c.get_isEnforced():
            continue
        ends = []
        for k, (sock, loc) in enumerate((("body_1", pc.get_location_body_1()),
                                         ("body_2", pc.get_location_body_2())), start=1):
            base, X = _pose(opensim.PhysicalFrame.safeDownCast(
                pc.getSocket(sock).getConnecteeAsObject()))
            if base == ground and not keep_world:
                raise bad(f"constraint {c.getName()} (PointConstraint): its {sock} is the "
                          "ground of a model whose ground is not kept: not supported")
            base = WORLD_BODY if base == ground else base
            p = tuple(float(x) + 0.0 for x in X[:3, :3] @ _vec3(loc) + X[:3, 3])
            same = [f.name for f in frames if f.body == base
                    and np.allclose(f.xyz, p, rtol=0.0, atol=1e-12)]
            if same:
                ends.append(same[0])
            else:
                frames.append(Frame(f"{c.getName()}_point_{k}", base, p))
                ends.append(frames[-1].name)
        out.append(Constraint(c.getName(), "point", ends[0], ends[1]))
        notes.append(f"constraint {c.getName()} (PointConstraint): a point loop between "
                     f"frames {ends[0]} and {ends[1]}")
    return out


def _with_damping(joints, damping, scaled, model, notes, bad) -> list:
    """Joints with the viscosity of their coordinates' damping forces (scaled to the
    canonical coordinate: d / s² for a slope s); a ball joint's three coordinates must
    carry one value d (their speeds are the components of ω, so −d ω: the canonical
    per-axis damping)."""
    if not damping:
        return joints
    out, done = [], set()
    cs = model.getCoordinateSet()
    for j in joints:
        if j.type in ("revolute", "prismatic") and j.name in damping:
            out.append(replace(j, damping=damping[j.name] / scaled.get(j.name, 1.0) ** 2))
            done.add(j.name)
            continue
        if j.type == "ball":
            coords = [c.getName() for c in cs if c.getJoint().getName() == j.name]
            vals = {damping[c] for c in coords if c in damping}
            if vals:
                if len(vals) != 1 or not all(c in damping for c in coords):
                    raise bad(f"BallJoint {j.name}: its coordinates carry different "
                              "damping: not supported (one per-axis value)")
                out.append(replace(j, damping=damping[coords[0]]))
                done.update(coords)
                continue
        out.append(j)
    left = sorted(set(damping) - done)
    if left:
        raise bad(f"damping force on coordinate {left[0]}: its joint is not a canonical "
                  "revolute, prismatic or ball joint (a locked coordinate): not supported")
    return out


def _with_springs(joints, springs, scaled, bad) -> list:
    """Joints with the stiffness k and rest length x_ref of their coordinate's
    SpringGeneralizedForce, in the canonical coordinate q = s x (s the LinearFunction
    slope): −k (x − x_ref) is −(k / s²)(q − s x_ref). Revolute and prismatic joints only."""
    if not springs:
        return joints
    out, done = [], set()
    for j in joints:
        if j.type in ("revolute", "prismatic") and j.name in springs:
            k, ref = springs[j.name]
            sc = scaled.get(j.name, 1.0)
            out.append(replace(j, stiffness=k / sc ** 2, spring_ref=sc * ref))
            done.add(j.name)
            continue
        out.append(j)
    left = sorted(set(springs) - done)
    if left:
        raise bad(f"spring (SpringGeneralizedForce stiffness) on coordinate {left[0]}: its "
                  "joint is not a canonical revolute or prismatic joint: not supported")
    return out


def _weld_pose(j, pose):
    _, X_AF = pose(j.getParentFrame())
    _, X_BM = pose(j.getChildFrame())
    return X_AF @ _inv(X_BM)


def _set_aside(model, notes: list, bad) -> dict:
    """Notes for what does not enter M or h; BadInput for forces and constraints that do.
    Returns ({coordinate: viscosity [N·m·s/rad or N·s/m]}, {coordinate: (stiffness
    [N·m/rad or N/m], rest length [rad or m])}) of the SpringGeneralizedForces (joint
    damping; joint springs, at most one per coordinate)."""
    muscles, actuators, off, damping, springs = [], [], [], {}, {}
    for f in model.getForceSet():
        kind = f.getConcreteClassName()
        sg = opensim.SpringGeneralizedForce.safeDownCast(f)
        if sg is not None and f.get_appliesForce():
            c = sg.get_coordinate()
            if sg.getViscosity():
                damping[c] = damping.get(c, 0.0) + float(sg.getViscosity())
            if sg.getStiffness():
                if c in springs:
                    raise bad(f"coordinate {c}: two SpringGeneralizedForces with stiffness: "
                              "not supported (one joint spring per coordinate)")
                springs[c] = (float(sg.getStiffness()), float(sg.getRestLength()))
            continue
        if opensim.Muscle.safeDownCast(f) is not None:
            muscles.append(f.getName())
        elif kind in _ACTUATORS:
            actuators.append(f.getName())
        elif not f.get_appliesForce():
            off.append(f.getName())
        else:
            raise bad(f"force {f.getName()} ({kind}) acts on the model: not supported (the "
                      "canonical model has no force elements; remove it or disable it "
                      "with appliesForce false)")
    if muscles:
        notes.append(f"{len(muscles)} muscle(s) set aside ({', '.join(muscles[:5])}"
                     f"{', …' if len(muscles) > 5 else ''}): they do not enter M or h; the "
                     "harness applies generalized forces directly")
    if actuators:
        notes.append(f"{len(actuators)} actuator(s) set aside: the harness applies "
                     "generalized forces directly")
    if off:
        notes.append(f"{len(off)} force(s) with appliesForce false set aside")
    wraps = sum(b.getWrapObjectSet().getSize() for b in model.getBodySet()) + \
        model.getGround().getWrapObjectSet().getSize()
    if wraps:
        notes.append(f"{wraps} wrap object(s) set aside: they shape muscle paths only")
    for c in model.getConstraintSet():
        if c.get_isEnforced() and c.getConcreteClassName() in ("CoordinateCouplerConstraint",
                                                               "PointConstraint"):
            continue  # a joint coupling (_couplers), a loop closed at a point (_points)
        if c.get_isEnforced():
            raise bad(f"constraint {c.getName()} ({c.getConcreteClassName()}): not "
                      "supported (the import reads a tree and joint couplings)")
        notes.append(f"constraint {c.getName()} is not enforced: set aside")
    n = model.getContactGeometrySet().getSize()
    if n:
        notes.append(f"{n} contact geometry(ies) set aside: no contact force acts in "
                     "stages 0-2")
    if model.getControllerSet().getSize():
        notes.append(f"{model.getControllerSet().getSize()} controller(s) set aside")
    return damping, springs


class _Axis:
    """Stand-in coordinate of a coupled CustomJoint axis: its own canonical joint, named
    ``<joint>_<axis label>``, free and unbounded (the coupling row holds it)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def getName(self) -> str:  # noqa: N802 - the Coordinate API _chain reads
        return self._name

    def getDefaultLocked(self) -> bool:  # noqa: N802
        return False

    def getDefaultClamped(self) -> bool:  # noqa: N802
        return False

    def getDefaultValue(self) -> float:  # noqa: N802
        return 0.0


_X, _Y, _Z = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)


def _elements(j, kind, bad, coupled) -> list:
    """X_FM(q) of one joint as a list of elements, applied left to right:
    ("const", X), ("revolute"|"prismatic", axis (3,), coordinate, slope, intercept),
    ("ball", coordinates). ``coupled``: (``_couplers``, the list each coupled CustomJoint
    axis is added to: (its joint name, coordinate, OpenSim function, scale, f at the
    leader's zero, where))."""
    name = j.getName()
    where = f"{kind} {name}"
    jc = [j.get_coordinates(i) for i in range(j.numCoordinates())]
    if kind == "WeldJoint":
        return []
    if kind == "PinJoint":
        return [("revolute", _Z, jc[0], 1.0, 0.0)]
    if kind == "SliderJoint":
        return [("prismatic", _X, jc[0], 1.0, 0.0)]
    if kind == "GimbalJoint":  # R_FM = Rx(q1) Ry(q2) Rz(q3), body-fixed
        return [("revolute", a, c, 1.0, 0.0) for a, c in zip((_X, _Y, _Z), jc)]
    if kind == "UniversalJoint":  # R_FM = Rx(q1) Ry(q2)
        return [("revolute", a, c, 1.0, 0.0) for a, c in zip((_X, _Y), jc)]
    if kind == "BallJoint":
        for c in jc:
            if c.getDefaultLocked():
                raise bad(f"{where}: coordinate {c.getName()} is locked: a locked ball joint "
                          "is not supported (use a WeldJoint)")
        return [("ball", jc)]
    if kind != "CustomJoint":
        raise bad(f"{where}: joint type {kind} is not supported (supported: PinJoint, "
                  "SliderJoint, BallJoint, GimbalJoint, UniversalJoint, WeldJoint, "
                  "FreeJoint (root only), CustomJoint)")
    st = opensim.CustomJoint.safeDownCast(j).getSpatialTransform()
    axes = []
    for k in range(6):
        ta = st.getTransformAxis(k)
        arr = ta.getCoordinateNamesInArray()
        fn = ta.getFunction() if ta.hasFunction() else None
        axes.append((f"{'rotation' if k < 3 else 'translation'}{k % 3 + 1}",
                     _vec3(ta.getAxis()), [arr.get(i) for i in range(arr.getSize())], fn,
                     fn.getConcreteClassName() if fn is not None else "Constant"))
    lead: dict = {}  # coordinate → the first axis that is a LinearFunction of it alone
    for k, (_, _, names, fn, _) in enumerate(axes):
        if _linear(fn) is not None and len(names) == 1:
            lead.setdefault(names[0], k)
    rot, tr = [], []
    for k, (label, axis, names, fn, fkind) in enumerate(axes):
        nrm = float(np.linalg.norm(axis))
        scale = nrm if k >= 3 else 1.0  # a translation moves |axis| per unit
        if len(names) > 1:
            raise bad(f"{where}: {label} is a {fkind} of {len(names)} coordinates "
                      f"({', '.join(names)}): a function of several coordinates is not "
                      "supported")
        if names and nrm == 0:
            raise bad(f"{where}: {label} has a zero axis")
        if not names:  # a function of no coordinate: a constant
            value = 0.0 if fn is None else (
                opensim.Constant.safeDownCast(fn).getValue() if fkind == "Constant"
                else fn.calcValue(opensim.Vector(1, 0.0)))
            if value != 0 and nrm == 0:
                raise bad(f"{where}: {label} has a zero axis")
            el = ("const", _rot(axis / nrm, value) if k < 3 else _trans(axis * value)) \
                if value != 0 else None
        elif lead.get(names[0]) == k:
            slope, icpt = _linear(fn)
            if slope == 0:
                raise bad(f"{where}: {label} has slope 0")
            c = next(c for c in jc if c.getName() == names[0])
            el = ("revolute" if k < 3 else "prismatic", tuple(axis / nrm), c,
                  float(slope * scale), float(icpt * scale))
        else:
            el = _coupled_axis(where, name, label, k, axis / nrm, scale, names[0], fn, jc,
                               lead, coupled, bad)
        if el is not None:
            (rot if k < 3 else tr).append(el)
    return tr + rot  # X_FM = Trans(Σ f_k a_k) · R1 R2 R3


def _linear(fn) -> tuple[float, float] | None:
    """(slope, intercept) of a LinearFunction, or of a MultiplierFunction of one (OpenSim's
    ScaleTool wraps each axis function so: slope and intercept times its scale), else None
    [the axis's unit per the coordinate's unit]."""
    if fn is None:
        return None
    kind = fn.getConcreteClassName()
    if kind == "LinearFunction":
        lf = opensim.LinearFunction.safeDownCast(fn)
        return float(lf.getSlope()), float(lf.getIntercept())
    if kind == "MultiplierFunction":
        mf = opensim.MultiplierFunction.safeDownCast(fn)
        inner = _linear(mf.getFunction())
        if inner is not None:
            return inner[0] * mf.getScale(), inner[1] * mf.getScale()
    return None


def _coupled_axis(where, name, label, k, unit, scale, cname, fn, jc, lead, coupled, bad):
    """The element of a CustomJoint axis driven by coordinate ``cname`` that is not its
    leading linear axis: a constant when the coordinate is locked, else its own joint
    ``<joint>_<label>`` (slope 1, intercept its value at the leader's zero) whose
    coupling to the leader is added to the pending list (resolved by ``_couplings``)."""
    couplers, deps = coupled
    c = next(c for c in jc if c.getName() == cname)
    if c.getDefaultLocked():
        value = scale * fn.calcValue(opensim.Vector(1, float(c.getDefaultValue())))
        return ("const", _rot(unit, value) if k < 3 else _trans(np.asarray(unit) * value))
    if cname in lead:
        x0 = 0.0
    elif cname in couplers:  # a coordinate coupled to another one (a patella's)
        indep, cfn, sf, cons = couplers[cname]
        x0 = sf * cfn.calcValue(opensim.Vector(1, 0.0))
    else:
        raise bad(f"{where}: coordinate {cname} drives no axis as a LinearFunction of it "
                  "alone (only coupled or non-linear axes), and no CoordinateCouplerConstraint "
                  "makes it follow another coordinate: not supported")
    c0 = scale * fn.calcValue(opensim.Vector(1, x0))
    follower = f"{name}_{label}"
    deps.append((follower, cname, fn, scale, c0, f"{where}: {label}"))
    return ("revolute" if k < 3 else "prismatic", tuple(unit), _Axis(follower), 1.0, c0)


def _couplers(model, bad) -> dict:
    """{dependent coordinate: (independent coordinate, OpenSim function, scale factor,
    constraint name)} of the enforced CoordinateCouplerConstraints (q_dep = scale ·
    f(q_indep)); BadInput for one of several independent coordinates."""
    out = {}
    for c in model.getConstraintSet():
        cc = opensim.CoordinateCouplerConstraint.safeDownCast(c)
        if cc is None or not c.get_isEnforced():
            continue
        arr = cc.getIndependentCoordinateNames()
        names = [arr.get(i) for i in range(arr.getSize())]
        if len(names) != 1:
            raise bad(f"constraint {c.getName()} (CoordinateCouplerConstraint): "
                      f"{len(names)} independent coordinates: only one is supported")
        out[cc.getDependentCoordinateName()] = (names[0], cc.getFunction(),
                                                _scale_factor(cc), c.getName())
    return out


def _scale_factor(cc) -> float:
    """The ``scale_factor`` property of a CoordinateCouplerConstraint (no getter in the
    Python API): q_dep = scale_factor · f(q_indep)."""
    return float(opensim.PropertyHelper.getValueDouble(cc.getPropertyByName("scale_factor")))


def _couplings(joints, couplers, deps, scaled, notes, bad) -> list:
    """[Coupling] of the coupled CustomJoint axes (``deps``) and of the
    CoordinateCouplerConstraints, in canonical coordinates: a leader coordinate q_l is
    |s_l| × OpenSim's (``scaled``), a coupled axis's joint q_f its displacement minus its
    value at the leader's zero."""
    moving = {j.name for j in joints if j.type in ("revolute", "prismatic")}
    out, used = [], set()

    def x_map(cname, where):  # (leader joint, a, b): OpenSim's x = a q_l + b
        if cname in moving:
            return cname, 1.0 / scaled.get(cname, 1.0), 0.0
        indep, cfn, sf, cons = couplers[cname]
        used.add(cname)
        if cfn.getConcreteClassName() != "LinearFunction" or indep not in moving:
            raise bad(f"{where}: coordinate {cname} follows {indep} through constraint "
                      f"{cons} ({cfn.getConcreteClassName()}): only a LinearFunction of a "
                      "moving coordinate can be composed with the axis's function")
        lf = opensim.LinearFunction.safeDownCast(cfn)
        a = sf * lf.getSlope() / scaled.get(indep, 1.0)
        return indep, a, sf * lf.getIntercept()

    for follower, cname, fn, scale, c0, where in deps:
        leader, a, b = x_map(cname, where)
        out.append(Coupling(follower, leader, **_function(fn, a, b, scale, -c0, where, bad)))
        notes.append(f"joint {follower}: {COUPLING_NOTE}{out[-1].label} ({where} is a "
                     f"{fn.getConcreteClassName()} of {cname}; a joint of its own, held by "
                     "the coupling in stage 3)")
    for dep, (indep, cfn, sf, cons) in couplers.items():
        if dep in used:
            notes.append(f"constraint {cons}: coordinate {dep} drives no joint of its own; its "
                         f"coupling to {indep} is composed into its joint's axes")
            continue
        where = f"constraint {cons} (CoordinateCouplerConstraint)"
        if dep not in moving or indep not in moving:
            raise bad(f"{where}: {dep} and {indep} must both be moving revolute or prismatic "
                      "coordinates")
        out.append(Coupling(dep, indep, **_function(cfn, 1.0 / scaled.get(indep, 1.0), 0.0,
                                                    scaled.get(dep, 1.0) * sf, 0.0, where,
                                                    bad)))
        notes.append(f"joint {dep}: {COUPLING_NOTE}{out[-1].label} ({where})")
    return out


def _function(fn, a: float, b: float, s: float, c: float, where: str, bad) -> dict:
    """Coupling keywords of q_f = s · fn(a q_l + b) + c: multiplier and offset for a
    LinearFunction, else ``function`` (harness/core/coupling_function.py): a SimmSpline
    with its knots mapped (x → (x − b)/a, y → s y + c), a PolynomialFunction composed;
    a MultiplierFunction scales s."""
    kind = fn.getConcreteClassName()
    if kind == "MultiplierFunction":
        mf = opensim.MultiplierFunction.safeDownCast(fn)
        return _function(mf.getFunction(), a, b, s * mf.getScale(), c, where, bad)
    if kind == "LinearFunction":
        lf = opensim.LinearFunction.safeDownCast(fn)
        return {"multiplier": float(s * lf.getSlope() * a),
                "offset": float(s * (lf.getSlope() * b + lf.getIntercept()) + c)}
    if kind == "SimmSpline":
        sp = opensim.SimmSpline.safeDownCast(fn)
        n = sp.getNumberOfPoints()
        x = [(sp.getX(i) - b) / a for i in range(n)]
        y = [s * sp.getY(i) + c for i in range(n)]
        if a < 0:
            x, y = x[::-1], y[::-1]
        return {"function": ("spline", tuple(float(v) for v in x),
                             tuple(float(v) for v in y))}
    if kind == "PolynomialFunction":
        co = opensim.PolynomialFunction.safeDownCast(fn).getCoefficients()
        p = np.poly1d([co.get(i) for i in range(co.size())])(np.poly1d([a, b])) * s + c
        return {"function": ("polynomial", tuple(float(v) for v in np.atleast_1d(p.coeffs)))}
    raise bad(f"{where}: a {kind} coupling is not supported (SimmSpline, PolynomialFunction, "
              "LinearFunction, or a MultiplierFunction of one)")


def _chain(name, parent, child, X_AF, elements, X_MB, rpy, xyz, Joint, notes,
           scaled) -> tuple:
    """(canonical joints, new massless bodies) from ``parent`` to ``child`` for
    X_AF · elements · X_MB."""
    out, new, pending, at = [], [], X_AF.copy(), parent
    items = []
    for el in elements:  # locked coordinates: constant at their default value
        if el[0] in ("revolute", "prismatic") and el[2].getDefaultLocked():
            c = el[2]
            v = el[3] * c.getDefaultValue() + el[4]
            notes.append(f"coordinate {c.getName()} is locked: its joint is a weld at the "
                         f"default value {c.getDefaultValue():g}")
            items.append(("const", _rot(el[1], v) if el[0] == "revolute"
                          else _trans(np.asarray(el[1]) * v)))
        else:
            items.append(el)
    moving = [i for i, el in enumerate(items) if el[0] != "const"]
    if not moving:
        X = X_AF
        for el in items:
            X = X @ el[1]
        return [Joint(name, "fixed", parent, child, xyz(X @ X_MB), rpy(X @ X_MB))], []
    last = moving[-1]
    tail = np.eye(4)
    for el in items[last + 1:]:
        tail = tail @ el[1]
    tail = tail @ X_MB
    for i, el in enumerate(items):
        if el[0] == "const":
            if i < last:
                pending = pending @ el[1]
            continue
        kind = el[0]
        if kind == "ball":
            jname, axis, slope, icpt = name, (0.0, 0.0, 1.0), 1.0, 0.0
            lo = hi = None
        else:
            c = el[2]
            axis, slope, icpt = np.asarray(el[1], float), el[3], el[4]
            jname = c.getName()
            if kind == "revolute" and icpt:
                pending = pending @ _rot(axis, icpt)
            elif kind == "prismatic" and icpt:
                pending = pending @ _trans(axis * icpt)
            if slope < 0:
                axis = -axis
            lo, hi = (None, None)
            if c.getDefaultClamped():
                lo, hi = sorted((abs(slope) * c.getRangeMin(), abs(slope) * c.getRangeMax()))
                lo, hi = (lo, hi) if slope > 0 else (-hi, -lo)
                lo, hi = min(lo, hi), max(lo, hi)
            if abs(abs(slope) - 1.0) > 1e-15:
                scaled[jname] = abs(slope)
                # every digit: `harness track` reads the factor back from the note
                notes.append(f"coordinate {jname}: the canonical coordinate is {abs(slope)!r} "
                             f"× OpenSim's (LinearFunction slope {slope:g})")
        folds = i == last and (kind == "prismatic" or not np.any(tail[:3, 3]))
        if folds:
            X = pending @ tail
            R_t = tail[:3, :3]
            axis = R_t.T @ np.asarray(axis, float) if kind != "ball" else axis
            out.append(_joint(Joint, kind, jname, at, child, X, axis, lo, hi, rpy, xyz))
            return out, new
        nxt = f"{child}__{jname}"
        new.append(nxt)
        out.append(_joint(Joint, kind, jname, at, nxt, pending, axis, lo, hi, rpy, xyz))
        at, pending = nxt, np.eye(4)
    out.append(Joint(f"{child}__fixed", "fixed", at, child, xyz(tail), rpy(tail)))
    return out, new


def _joint(Joint, kind, name, parent, child, X, axis, lo, hi, rpy, xyz):
    ax = tuple(float(a) + 0.0 for a in np.asarray(axis, float) / np.linalg.norm(axis))
    if kind == "ball":
        return Joint(name, "ball", parent, child, xyz(X), rpy(X))
    return Joint(name, kind, parent, child, xyz(X), rpy(X), ax, lo, hi)


# ----- out -------------------------------------------------------------------------------
def write_osim(spec: FixtureSpec, path: str, build_model: Callable[..., Any]) -> str:
    """Write ``spec`` (a validated FixtureSpec) as an .osim file at ``path`` (atomic: a
    temporary file beside it, then one rename); returns the path. ``build_model``: the
    adapter's canonical model → opensim.Model builder (passed in, so this module does not
    import the adapter's)."""
    _quiet()
    model = build_model(spec)
    return _print_atomic(model, path)


def _print_atomic(model, path) -> str:
    """OpenSim writes the model into a private temporary folder; its bytes then reach
    ``path`` through the harness's atomic file write (harness/core/io.py)."""
    path = os.fspath(path)
    with tempfile.TemporaryDirectory(prefix=".osim-") as tmpdir:
        tmp = os.path.join(tmpdir, "model.osim")
        if not model.printToXML(tmp):
            raise OSError(f"OpenSim could not write {path}")
        with open(tmp, "rb") as fh:
            write_bytes_atomic(path, fh.read())
    return path


# ----- a fitted motion out: model + coordinates (.mot) + markers (.trc) ------------------
def motion_text(names: Sequence[str], t: NDArray[np.float64], Q: NDArray[np.float64],
                rotational: Sequence[bool]) -> str:
    """t (N,) [s], Q (N, nq) [rad, m] as an OpenSim coordinate file (Storage format,
    version 1): time [s] and one column per coordinate, rotations in degrees
    (``inDegrees=yes``), translations in m."""
    t = np.asarray(t, dtype=float)
    V = np.array(Q, dtype=float)
    rot = np.asarray(rotational, dtype=bool)
    V[:, rot] = np.degrees(V[:, rot])
    head = ["swing", "version=1", f"nRows={len(t)}", f"nColumns={len(names) + 1}",
            "inDegrees=yes", "endheader", "\t".join(["time", *names])]
    rows = ["\t".join(f"{x:.17g}" for x in (tk, *row)) for tk, row in zip(t, V)]
    return "\n".join(head + rows) + "\n"


def trc_text(labels: Sequence[str], t: NDArray[np.float64], Y: NDArray[np.float64],
             rate_hz: float, name: str) -> str:
    """Y (N, K, 3) [m], t (N,) [s] as a marker file (.trc, PathFileType 4): positions
    written in mm, missing (NaN) samples left blank; frames numbered from 1 at times t."""
    Y = 1e3 * np.asarray(Y, dtype=float)
    n, k = Y.shape[:2]
    out = [f"PathFileType\t4\t(X/Y/Z)\t{name}",
           "DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\t"
           "OrigDataStartFrame\tOrigNumFrames",
           f"{rate_hz:g}\t{rate_hz:g}\t{n}\t{k}\tmm\t{rate_hz:g}\t1\t{n}",
           "\t".join(["Frame#", "Time"] + [x for lab in labels for x in (lab, "", "")]),
           "\t".join(["", ""] + [f"{a}{i + 1}" for i in range(k) for a in "XYZ"]),
           ""]
    for i in range(n):
        cells = [str(i + 1), f"{t[i]:.17g}"]
        for j in range(k):
            p = Y[i, j]
            cells += [""] * 3 if not np.all(np.isfinite(p)) else [f"{x:.6f}" for x in p]
        out.append("\t".join(cells))
    return "\n".join(out) + "\n"
