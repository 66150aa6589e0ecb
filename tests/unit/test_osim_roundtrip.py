"""Every catalog tree fixture (ball-joint fixtures included) → .osim (OpenSim's own
writer) → osim_to_spec (OpenSim's own parser) → the same model: masses, coms, inertias,
joint placements and axes, named frames, and M(q) of both specs through one engine at
random q. Armature has no OpenSim element (the export drops it): both sides are compared
without it. A continuous joint comes back as a revolute joint without limits (OpenSim
has one hinge), its q mapped (cos θ, sin θ) → θ."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engines.opensim import OpensimAdapter
from engines.opensim_osim import osim_to_spec
from fixtures import catalog
from harness.core.conventions import Layout, rpy_to_matrix
from harness.core.tolerances import lookup
from harness.model import registry
from harness.model.prepared import PreparedModel

FIXTURES = catalog.names() + catalog.joint_names()


def _no_armature(spec):
    return replace(spec, joints=tuple(replace(j, armature=0.0) for j in spec.joints))


def _X(xyz, rpy):
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = rpy_to_matrix(rpy), xyz
    return out


def _q_for(lay_a, lay_b, spec_a, q_a):
    """q of layout b holding q_a (layout a) joint by joint (continuous → angle)."""
    q_b = lay_b.neutral().copy()
    types = {j.name: j.type for j in spec_a.joints}
    for name in lay_b.joint_names:
        sa, sb = lay_a.slot(name), lay_b.slot(name)
        x = q_a[sa.iq:sa.iq + sa.nq]
        if types.get(name) == "continuous":
            x = np.array([np.arctan2(x[1], x[0])])
        q_b[sb.iq:sb.iq + sb.nq] = x
    return q_b


def _v_perm(lay_a, lay_b) -> np.ndarray:
    """Index into layout a's v of each entry of layout b's v."""
    out = np.empty(lay_b.nv, dtype=int)
    for name in lay_b.joint_names:
        sa, sb = lay_a.slot(name), lay_b.slot(name)
        out[sb.iv:sb.iv + sb.nv] = np.arange(sa.iv, sa.iv + sa.nv)
    return out


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_round_trips_through_osim(name, tmp_path):
    spec = _no_armature(catalog.get(name))
    path = tmp_path / f"{name}.osim"
    OpensimAdapter.write_osim(spec, path)
    back, _ = osim_to_spec(str(path))
    back = back.validate()
    tol = lookup("import", "osim_roundtrip").atol
    assert back.floating == spec.floating
    assert np.allclose(back.gravity, spec.gravity, rtol=0, atol=tol)
    b0, b1 = {b.name: b for b in spec.bodies}, {b.name: b for b in back.bodies}
    assert b0.keys() == b1.keys()
    for n, b in b0.items():
        assert b1[n].mass == b.mass, n
        assert np.allclose(b1[n].com, b.com, rtol=0, atol=tol), n
        assert np.allclose(b1[n].inertia, b.inertia, rtol=0, atol=tol), n
    j0, j1 = {j.name: j for j in spec.joints}, {j.name: j for j in back.joints}
    assert j0.keys() == j1.keys()
    for n, j in j0.items():
        k = j1[n]
        assert (k.parent, k.child) == (j.parent, j.child), n
        assert k.type == ("revolute" if j.type == "continuous" else j.type), n
        assert np.allclose(_X(k.xyz, k.rpy), _X(j.xyz, j.rpy), rtol=0, atol=tol), n
        if j.type in ("revolute", "continuous", "prismatic"):
            assert np.allclose(k.axis, j.axis, rtol=0, atol=tol), n
        assert k.damping == pytest.approx(j.damping, rel=1e-15, abs=0), n
        assert (k.stiffness, k.spring_ref) == (j.stiffness, j.spring_ref), n
    f0, f1 = {f.name: f for f in spec.frames}, {f.name: f for f in back.frames}
    assert f0.keys() == f1.keys()
    for n, f in f0.items():
        assert f1[n].body == f.body, n
        assert np.allclose(_X(f1[n].xyz, f1[n].rpy), _X(f.xyz, f.rpy), rtol=0, atol=tol), n
    # M(q) of both models through one engine at random q
    cls = registry.adapter_class(registry.preferred("fit"))
    a, b = cls(PreparedModel(spec, "a")), cls(PreparedModel(back, "b"))
    la, lb = Layout.from_spec(spec), Layout.from_spec(back)
    perm = _v_perm(la, lb)
    rng = np.random.default_rng(7)
    mt = lookup("import", "osim_mass_matrix")
    for _ in range(5):
        qa = la.random_q(rng)
        Ma = a.mass_matrix(qa)[np.ix_(perm, perm)]
        Mb = b.mass_matrix(_q_for(la, lb, spec, qa))
        assert np.abs(Ma - Mb).max() <= mt.atol + mt.rtol * np.abs(Ma).max(), name
