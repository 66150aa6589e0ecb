"""Joint springs in the canonical model (harness/core/spec.py Joint.stiffness, spring_ref;
−k (q − q_ref) in h), in every engine, read from SDF and MJCF.

* every engine's h with the springs minus its h without them is K (q − q_ref) (closed
  form), and its forward dynamics moves by −M⁻¹ K (q − q_ref);
* stage 0 reads every engine's spring back, and a declared spring the engines do not
  hold fails that row;
* SDF <spring_stiffness>/<spring_reference> and MJCF stiffness/springref become the
  joint's spring (decimals exact); a spring on a ball joint is refused in one line;
* the replay energy counts the springs' ½ k (q − q_ref)²: a free, undamped swing keeps it
  against a closed form.

Units: m, rad, N, N·m, J; tolerances from the table."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fixtures import catalog
from fixtures.export import to_mjcf
from harness.core.records import compare
from harness.core.tolerances import lookup
from harness.model.mjcf_import import load_mjcf
from harness.model.prepared import PreparedModel, prepare_fixture
from harness.model.registry import adapter_class
from harness.model.sdf_import import load_sdf_with_notes
from harness.stages import identity
from tests.conftest import ENGINES, adapter, assert_bad_input, assert_close

FX = "spring_chain"


def _without_springs():
    spec = catalog.get(FX)
    joints = tuple(dataclasses.replace(j, stiffness=0.0, spring_ref=0.0) for j in spec.joints)
    return PreparedModel(dataclasses.replace(spec, joints=joints).validate(), FX + "_bare")


@pytest.mark.parametrize("engine", ENGINES)
def test_springs_enter_h_as_k_times_q_minus_q_ref(engine):
    a = adapter(engine, FX)
    bare = adapter_class(engine)(_without_springs())
    lay = a.layout
    K = np.array([s.stiffness for s in lay.slots])
    ref = np.array([s.spring_ref for s in lay.slots])
    assert np.all(K > 0) and np.all(ref != 0)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, v, tau = lay.random_q(rng), rng.normal(size=lay.nv), rng.normal(size=lay.nv)
        spring = K * (q - ref)  # one-dof joints: q and v share their index
        h, h0 = a.bias_forces(q, v), bare.bias_forces(q, v)
        assert_close(h - h0, spring, "dynamics", "bias_forces", f"{engine} spring in h")
        M = a.mass_matrix(q)
        assert_close(a.forward_dynamics(q, v, tau) - bare.forward_dynamics(q, v, tau),
                     -np.linalg.solve(M, spring), "dynamics", "forward_dynamics",
                     f"{engine} spring in v̇")


def test_stage0_reads_every_spring_back_and_a_missing_one_fails():
    model = prepare_fixture(FX)
    declared = identity.joint_rows(identity.declared_readback(model), model.layout.joint_names,
                                   "joint_spring")
    np.testing.assert_array_equal(declared, [[12.0, 0.3], [150.0, -0.02], [4.0, -0.5]])
    tol = lookup("model_identity", "joint_spring")
    for e in ENGINES:
        a = adapter(e, FX)
        rows = identity.joint_rows(identity.readback(a), a.layout.joint_names, "joint_spring")
        assert compare("x", "model_identity", FX, "joint_spring", "declared", e, declared,
                       rows, tol, "a", "b").passed, (e, rows)
    # engines built without the springs fail the row against the declared springs
    bare = adapter_class("mujoco")(_without_springs())
    rows = identity.joint_rows(identity.readback(bare), bare.layout.joint_names,
                               "joint_spring")
    assert not compare("x", "model_identity", FX, "joint_spring", "declared", "mujoco",
                       declared, rows, tol, "a", "b").passed


def test_mjcf_stiffness_and_springref_become_the_joint_spring(tmp_path):
    spec = catalog.get(FX)
    path = tmp_path / "springs.xml"
    path.write_text(to_mjcf(spec), encoding="utf-8")
    back = {j.name: j for j in load_mjcf(str(path)).joints}
    for j in spec.joints:
        assert (back[j.name].stiffness, back[j.name].spring_ref) == (j.stiffness,
                                                                     j.spring_ref)


def _sdf(dynamics: str, kind: str = "revolute") -> str:
    return ("<sdf version='1.6'><model name='m'><link name='a'><inertial><mass>1</mass>"
            "<inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial></link>"
            "<link name='b'><pose>0 0 -1 0 0 0</pose><inertial><mass>1</mass><inertia>"
            "<ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial></link>"
            f"<joint name='j' type='{kind}'><parent>a</parent><child>b</child><axis><xyz>1 0 0"
            f"</xyz><dynamics>{dynamics}</dynamics></axis></joint></model></sdf>")


def test_sdf_spring_stiffness_and_reference(tmp_path):
    path = tmp_path / "s.sdf"
    path.write_text(_sdf("<spring_stiffness>7.5</spring_stiffness><spring_reference>-0.25"
                         "</spring_reference>"), encoding="utf-8")
    spec, notes = load_sdf_with_notes(str(path))
    j = next(j for j in spec.joints if j.name == "j")
    assert (j.stiffness, j.spring_ref) == (7.5, -0.25) and not any("spring" in n
                                                                    for n in notes)
    spec, notes = load_sdf_with_notes(str(path), drop_springs=True)
    j = next(j for j in spec.joints if j.name == "j")
    assert (j.stiffness, j.spring_ref) == (0.0, 0.0)
    assert any("joint springs set aside" in n and "j (7.5)" in n for n in notes)
    path.write_text(_sdf("<spring_stiffness>3</spring_stiffness>", "ball"), encoding="utf-8")
    assert_bad_input(lambda p: load_sdf_with_notes(p)[0], str(path),
                     "joint j: spring_stiffness on a ball joint is not supported")


def test_free_swing_keeps_kinetic_gravity_and_spring_energy():
    """Undamped spring_chain (its damping removed), τ = 0, RK4 at 1e-3 s over 1 s: the
    replay energy (kinetic + gravity + ½ Σ k (q − q_ref)²) stays at its start to RK4's
    error; without the spring term it would swing by the spring's energy (~1 J)."""
    from harness.model.candidate import Controls
    from harness.model.integrators import Method, rollout
    from harness.stages.replay.measures import Observer

    spec = catalog.get(FX)
    undamped = dataclasses.replace(spec, joints=tuple(
        dataclasses.replace(j, damping=0.0) for j in spec.joints)).validate()
    model = PreparedModel(undamped, FX + "_undamped")
    a = adapter_class("pinocchio")(model)
    t = np.linspace(0.0, 1.0, 101)
    controls = Controls(t, np.zeros((t.size, a.nv)), "zoh")
    q0, v0 = np.array([0.9, 0.05, 0.4]), np.zeros(3)
    res = rollout(a, q0, v0, controls, Method("rk4", dt=1e-3))
    obs = Observer(a, model)
    E = obs.energy(res.q, res.v, obs.poses(res.q))
    springs = np.array([0.5 * s.stiffness * (res.q[:, s.iq] - s.spring_ref) ** 2
                        for s in model.layout.slots]).sum(axis=0)
    assert np.ptp(springs) > 0.5  # the springs' energy swings by more than 0.5 J
    tol = lookup("replay", "energy_balance")
    assert np.abs(E - E[0]).max() <= tol.atol + tol.rtol * np.abs(E).max(), \
        np.abs(E - E[0]).max()
