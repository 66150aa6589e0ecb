"""Writes tests/data/osim_user_model.osim with OpenSim's own API (run it with the project's
Python: ``.venv/bin/python tests/data/make_osim_user_model.py``).

A small OpenSim model [m, kg, kg·m², rad] with every joint type the .osim import reads:
a FreeJoint root (pelvis), a PinJoint and a SliderJoint with offset frames on both sides
(the child offsets away from the child's origin), a BallJoint, a WeldJoint, and a
CustomJoint of three rotations and one translation, each a LinearFunction of its own
coordinate (slopes 1 and −1, a non-zero intercept) or a Constant; full inertia tensors
with products; three markers.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import opensim as osim

OUT = Path(__file__).with_name("osim_user_model.osim")


def _v(x):
    return osim.Vec3(*x)


def build() -> osim.Model:
    m = osim.Model()
    m.setName("osim_user_model")
    m.setGravity(osim.Vec3(0, -9.80665, 0))
    ground = m.getGround()

    def body(name, mass, com, moments, products):
        b = osim.Body(name, mass, osim.Vec3(*com), osim.Inertia(*moments, *products))
        m.addBody(b)
        return b

    pelvis = body("pelvis", 9.0, (0.01, 0.02, -0.03), (0.09, 0.08, 0.07), (0.004, -0.002, 0.001))
    thigh = body("thigh", 5.0, (0.0, -0.18, 0.01), (0.06, 0.012, 0.055), (0.001, 0.0, -0.002))
    shank = body("shank", 3.0, (0.0, -0.2, 0.0), (0.04, 0.006, 0.038), (0.0, 0.001, 0.0))
    torso = body("torso", 20.0, (0.0, 0.25, 0.0), (0.5, 0.2, 0.45), (0.01, 0.02, -0.015))
    head = body("head", 4.5, (0.0, 0.1, 0.02), (0.02, 0.015, 0.02), (0.0, 0.0, 0.001))
    arm = body("arm", 2.2, (0.0, -0.14, 0.0), (0.015, 0.003, 0.014), (0.0005, 0.0, 0.0))
    hand = body("hand", 0.5, (0.0, -0.05, 0.0), (0.0008, 0.0003, 0.0007), (0.0, 0.0, 0.0))

    # (name, parent, its offset xyz, rpy (body-fixed X-Y-Z), child, its offset xyz, rpy)
    m.addJoint(osim.FreeJoint("pelvis_free", ground, pelvis))
    m.addJoint(osim.PinJoint("hip", pelvis, _v((0.0, -0.08, 0.09)), _v((0.1, 0.2, -0.3)),
                             thigh, _v((0.01, 0.02, 0.0)), _v((0.0, 0.0, 0.4))))
    m.addJoint(osim.SliderJoint("knee_slide", thigh, _v((0.0, -0.4, 0.0)),
                                _v((0.0, 0.0, -math.pi / 2)), shank, _v((0.0, 0.03, 0.0)),
                                _v((0.2, 0.0, 0.0))))
    m.addJoint(osim.BallJoint("lumbar", pelvis, _v((0.0, 0.1, 0.0)), _v((0.0, 0.3, 0.0)),
                              torso, _v((0.0, 0.0, 0.0)), _v((0.0, -0.3, 0.1))))
    m.addJoint(osim.WeldJoint("neck", torso, _v((0.0, 0.5, 0.0)), _v((0.1, 0.0, 0.0)),
                              head, _v((0.0, -0.02, 0.0)), _v((0.0, 0.0, 0.0))))
    st = osim.SpatialTransform()
    for k, (axis, coord, fn) in enumerate((
            ((0, 0, 1), "sh_flex", osim.LinearFunction(1.0, 0.0)),
            ((1, 0, 0), "sh_add", osim.LinearFunction(-1.0, 0.1)),
            ((0, 1, 0), "sh_rot", osim.LinearFunction(1.0, 0.0)),
            ((1, 0, 0), None, osim.Constant(0.02)),
            ((0, 1, 0), "sh_elev", osim.LinearFunction(1.0, 0.0)),
            ((0, 0, 1), None, osim.Constant(0.0)))):
        ta = st.updTransformAxis(k)
        ta.setAxis(osim.Vec3(*axis))
        names = osim.ArrayStr()
        if coord:
            names.append(coord)
        ta.setCoordinateNames(names)
        ta.set_function(fn)
    m.addJoint(osim.CustomJoint("shoulder", torso, _v((0.0, 0.45, 0.18)), _v((0.0, 0.0, 0.2)),
                                arm, _v((0.0, 0.02, 0.0)), _v((0.0, 0.0, 0.0)), st))
    m.addJoint(osim.PinJoint("wrist", arm, _v((0.0, -0.3, 0.0)), _v((0.0, math.pi / 2, 0.0)),
                             hand, _v((0.0, 0.0, 0.0)), _v((0.0, math.pi / 2, 0.0))))
    # coordinates are named after their joint (OpenSim's default adds a suffix)
    for j in m.getJointSet():
        kind = j.getConcreteClassName()
        if kind in ("PinJoint", "SliderJoint"):
            j.upd_coordinates(0).setName(j.getName())
        elif kind == "BallJoint":
            for k, a in enumerate("xyz"):
                j.upd_coordinates(k).setName(f"{j.getName()}_r{a}")
    for name, b, loc in (("ASIS", pelvis, (0.05, 0.0, 0.1)), ("KNEE", thigh, (0.04, -0.4, 0.0)),
                         ("FINGER", hand, (0.0, -0.09, 0.01))):
        m.addMarker(osim.Marker(name, b, osim.Vec3(*loc)))
    m.finalizeConnections()
    m.initSystem()
    return m


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    build().printToXML(str(out))
    print(out)
