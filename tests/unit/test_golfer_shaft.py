"""The golfer whose club bends at one point of its shaft (``golfer3d(shaft="flex")``):
every engine builds the same model as Pinocchio, zero bend is the rigid club (the same
frames, mass and inertia), the rigid club's calibrated points move onto the bent
shaft's head where they were, and bending moves the head across the shaft."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fixtures.golfers import (
    TINY_MASS,
    GolferDims,
    bend_point,
    golfer3d,
    marker_offsets,
    on_bent_shaft,
)
from harness.model import registry
from harness.model.prepared import PreparedModel
from harness.swing.pipeline import carry_coordinates
from tests.conftest import assert_builds_alike, assert_close

ENGINES = ("mujoco", "crocoddyl", "drake", "opensim")


@pytest.fixture(scope="module")
def bent():
    return PreparedModel(golfer3d(shaft="flex", grip="hinge", root="actuated",
                                  name="golfer3d_flex").validate(), "test:golfer3d_flex")


@pytest.fixture(scope="module")
def rigid():
    return PreparedModel(golfer3d(grip="hinge", root="actuated",
                                  name="golfer3d_rigid").validate(), "test:golfer3d_rigid")


@pytest.mark.parametrize("engine", ENGINES)
def test_every_engine_builds_the_bent_shaft_as_pinocchio_does(bent, engine):
    """Frame poses (Crocoddyl has no kinematics of its own), the mass matrix and forward
    dynamics at random states against Pinocchio's."""
    other = registry.adapter_class(engine)(bent)
    pin = registry.adapter_class("pinocchio")(bent)
    assert_builds_alike(other, pin, bent, 17, engine, kinematics=engine != "crocoddyl")


def _rigid_with_the_link(rigid):
    """The rigid golfer whose club also carries the bent golfer's one extra body, the
    massless-by-intent link between the bend's two revolutes (``TINY_MASS`` kg and
    1e-6 kg·m² at the bend point), composed into the club by the parallel-axis rule."""
    a = bend_point(GolferDims())
    spec = rigid.spec
    club = next(b for b in spec.bodies if b.name == "club")
    link = next(b for b in golfer3d(shaft="flex").bodies if b.name == "club_flex_link0")
    assert link.mass == TINY_MASS
    m = club.mass + link.mass
    z = (club.mass * club.com[2] - link.mass * a) / m
    I = club.inertia_matrix + link.inertia_matrix
    for mass, zc in ((club.mass, club.com[2]), (link.mass, -a)):
        I += mass * (zc - z) ** 2 * np.diag([1.0, 1.0, 0.0])
    composite = dataclasses.replace(club, mass=m, com=(0.0, 0.0, z),
                                    inertia=tuple(I.ravel()))
    bodies = tuple(composite if b.name == "club" else b for b in spec.bodies)
    return PreparedModel(dataclasses.replace(spec, bodies=bodies, name="golfer3d_link")
                         .validate(), "test:golfer3d_link")


def test_zero_bend_is_the_rigid_club(bent, rigid):
    """At zero bend every frame (the club-head markers and centre on the head's body
    included) sits where the rigid club (MuJoCo) puts it, and without the bend's rows
    and columns the mass matrix (Drake) is the rigid golfer's once its club also carries
    the one link between the bend's revolutes."""
    a = registry.adapter_class("drake")(bent)
    b = registry.adapter_class("mujoco")(rigid)
    c = registry.adapter_class("mujoco")(_rigid_with_the_link(rigid))
    assert a.nv == b.nv + 2
    keep = [s.iv for s in bent.layout.slots if not s.name.startswith("club_flex")]
    rng = np.random.default_rng(5)
    for _ in range(3):
        qr = rigid.layout.random_q(rng)
        qb = carry_coordinates(qr, rigid.layout, bent.layout)[0]
        assert_close(a.frame_poses(qb, rigid.frames), b.frame_poses(qr, rigid.frames),
                     "kinematics", "frame_pose", "zero bend")
        assert_close(a.mass_matrix(qb)[np.ix_(keep, keep)], c.mass_matrix(qr),
                     "dynamics", "mass_matrix", "zero bend")


def test_rigid_points_below_the_bend_move_to_the_head_where_they_were():
    d = GolferDims()
    a = bend_point(d)
    rigid = marker_offsets(d)
    moved = on_bent_shaft(rigid, d)
    for label, (body, xyz) in rigid.items():
        if body == "club" and xyz[2] < -a:
            assert moved[label] == ("club_head", (xyz[0], xyz[1], xyz[2] + a))
        else:
            assert moved[label] == (body, tuple(float(x) for x in xyz))
    assert moved == marker_offsets(d, shaft="flex")
    # every club-head marker is below the bend
    assert {b for l, (b, _) in moved.items() if l.startswith("Marker_2")} == {"club_head"}


def test_a_bend_turns_the_head_about_the_bend_point(bent):
    """A bend of θ about the club's x axis moves the club-head centre on a circle of
    radius (club length − bend point) about the bend point: its distance from the grip
    point's frame stays, and the chord is 2 r sin(θ/2)."""
    a = registry.adapter_class("pinocchio")(bent)
    d = GolferDims()
    r = d.club - bend_point(d)
    q0 = bent.layout.neutral()
    k = bent.layout.slot("club_flex_x").iq
    for th in (0.05, -0.2):
        q1 = q0.copy()
        q1[k] = th
        p0, p1 = (a.frame_pose(q, "club_head_centre")[:3] for q in (q0, q1))
        assert_close(np.linalg.norm(p1 - p0), 2 * r * abs(np.sin(th / 2)), "kinematics",
                     "frame_pose", "bend chord")


def test_shaft_figures_find_the_spring_a_moment_was_built_from(bent):
    """A bending moment built as −kθ − cθ̇ + m₀ from known k, c, m₀ (and zero elsewhere)
    comes back as that law with R² = 1; the same moment with a part the angle and its
    rate cannot explain (a sine of time orthogonal to both here by construction's
    randomness) comes back with R² below 1 by that part's share of the variance."""
    from types import SimpleNamespace

    from harness.swing.pipeline import shaft_figures

    lay = bent.layout
    rng = np.random.default_rng(3)
    n = 200
    t = np.linspace(0.0, 0.3, n)
    q = np.zeros((n, lay.nq))
    v = np.zeros((n, lay.nv))
    act = np.zeros((n, lay.nv))
    sx = lay.slot("club_flex_x")
    th = 0.1 * np.sin(2 * np.pi * 6.0 * t) + 0.01 * rng.standard_normal(n)
    om = np.gradient(th, t)
    q[:, sx.iq], v[:, sx.iv] = th, om
    k, c, m0 = 120.0, 0.2, -3.0
    act[:, sx.iv] = -k * th - c * om + m0
    d = GolferDims()
    out = shaft_figures(lay, SimpleNamespace(q=q, v=v, act=act, tau=act), d)
    fx = out["club_flex_x"]
    assert_close(np.array([fx["stiffness_Nm_per_rad"], fx["damping_Nms_per_rad"],
                           fx["offset_Nm"], fx["r2"]]), np.array([k, c, m0, 1.0]),
                 "swing", "shaft_law", "spring recovered")
    arm = d.club - bend_point(d)
    assert_close(np.array(fx["deflection_range_mm"]),
                 1e3 * arm * np.sin([th.min(), th.max()]), "swing", "stated_figure",
                 "deflection")
    extra = 5.0 * rng.standard_normal(n)
    A = np.c_[-th, -om, np.ones(n)]
    extra -= A @ np.linalg.lstsq(A, extra, rcond=None)[0]   # the part no law explains
    act[:, sx.iv] += extra
    fx = shaft_figures(lay, SimpleNamespace(q=q, v=v, act=act, tau=act), d)["club_flex_x"]
    assert_close(np.array([fx["stiffness_Nm_per_rad"], fx["r2"]]),
                 np.array([k, 1.0 - np.var(extra) / np.var(act[:, sx.iv])]),
                 "swing", "shaft_law", "spring with an unexplained part")
    assert shaft_figures(PreparedModel(golfer3d(root="actuated").validate(),
                                       "test:rigid").layout, None, d) is None
