"""Joint couplings (URDF <mimic>, MJCF <equality><joint>) in stage 3: the mimic joint moves,
every engine's KKT answer through the coupling row agrees with the others and with an
independent reduced-coordinate solution, the native rows hold it, and the command line
says which joints are coupled or frozen."""
from __future__ import annotations

import dataclasses
import itertools
import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from fixtures.export import to_mjcf
from harness.core.errors import BadInput
from harness.core.spec import Coupling
from harness.core.tolerances import lookup
from harness.model import registry
from harness.model.mjcf_import import load_mjcf_with_notes
from harness.model.prepared import PreparedModel
from harness.model.urdf_import import load_urdf_with_notes
from harness.stages.constrained import stage as S
from tests.conftest import ENGINES, ROOT, assert_bad_input, assert_close, run_cli

GRIPPER = ROOT / "tests" / "data" / "mimic_gripper.urdf"


def _file_mimic() -> tuple[str, str, float, float]:
    """(follower, leader, multiplier, offset) as the file writes them (read here with
    ElementTree, not through the importer)."""
    for j in ET.parse(GRIPPER).getroot().iter("joint"):
        mm = j.find("mimic")
        if mm is not None:
            return (j.get("name"), mm.get("joint"), float(mm.get("multiplier")),
                    float(mm.get("offset")))
    raise AssertionError("the test gripper has no mimic joint")


@pytest.fixture(scope="module", params=[False, True], ids=["fixed", "floating"])
def model(request):
    spec, _ = load_urdf_with_notes(str(GRIPPER), floating=request.param)
    return PreparedModel(spec, str(GRIPPER))


@pytest.fixture(scope="module")
def adapters(model):
    return {e: registry.adapter_class(e)(model) for e in ENGINES}


@pytest.fixture(scope="module")
def states(model, adapters):
    return S.sample_states(model.spec, adapters["pinocchio"], 4, np.random.default_rng(3))


@pytest.fixture(scope="module")
def terms(model, adapters, states):
    Q, V, TAU = states
    return {e: S.engine_terms(model.spec, model.layout, a, Q, V, TAU)
            for e, a in adapters.items()}


def test_mimic_joint_moves_and_keeps_its_relation(model, states):
    """The follower is a moving joint of the spec (not frozen), the relation is the file's,
    and the sampled states move it along the relation."""
    follower, leader, mult, off = _file_mimic()
    j = {j.name: j for j in model.spec.joints}
    assert j[follower].type == "prismatic"
    assert follower in model.layout.joint_names
    assert model.spec.couplings == (Coupling(follower, leader, mult, off),)
    Q, V, _ = states
    f, lead = model.layout.slot(follower), model.layout.slot(leader)
    g = lookup("constrained", "constraint_residual")  # the relation holds at the samples
    np.testing.assert_allclose(Q[:, f.iq], mult * Q[:, lead.iq] + off, rtol=0, atol=g.atol)
    np.testing.assert_allclose(V[:, f.iv], mult * V[:, lead.iv], rtol=0, atol=g.atol)
    assert np.abs(Q[1:, f.iq] - off).min() > 1e-3  # the follower is not held at its offset


@pytest.mark.parametrize("pair", list(itertools.combinations(ENGINES, 2)),
                         ids=lambda p: f"{p[0]}~{p[1]}")
def test_kkt_through_the_coupling_agrees_across_engines(pair, terms):
    a, b = (terms[e] for e in pair)
    for k in range(a["vdot"].shape[0]):
        assert_close(a["vdot"][k], b["vdot"][k], "constrained", "constrained_vdot",
                     f"{pair} state {k} v̇")
        assert_close(a["lam"][k], b["lam"][k], "constrained", "constraint_multipliers",
                     f"{pair} state {k} λ")


@pytest.mark.parametrize("engine", ENGINES)
def test_kkt_matches_reduced_coordinates_of_another_engine(engine, model, adapters, states,
                                                           terms):
    """v̇ = S v̇_r with (Sᵀ M S) v̇_r = Sᵀ (τ − h − D v): S the coupling's null-space map
    built here from the file (q = S q_r + const, q_r the free joints), M and h from the
    *next* engine's own API, D from the file's damping; against ``engine``'s KKT v̇."""
    follower, leader, mult, _ = _file_mimic()
    nv = model.layout.nv
    fv, lv = model.layout.slot(follower).iv, model.layout.slot(leader).iv
    free = [i for i in range(nv) if i != fv]  # the free root's six dofs too
    Smap = np.zeros((nv, len(free)))
    Smap[free, np.arange(len(free))] = 1.0
    Smap[fv, free.index(lv)] = mult
    damping = {j.get("name"): float(j.find("dynamics").get("damping"))
               for j in ET.parse(GRIPPER).getroot().iter("joint")
               if j.find("dynamics") is not None}
    D = np.zeros(nv)
    for slot in model.layout.slots:
        D[slot.iv:slot.iv + slot.nv] = damping.get(slot.name, 0.0)
    other = adapters[ENGINES[(ENGINES.index(engine) + 1) % len(ENGINES)]]
    Q, V, TAU = states
    for k in range(Q.shape[0]):
        M = other.mass_matrix(Q[k])
        f = TAU[k] - other.bias_forces(Q[k], V[k]) - D * V[k]
        vr = np.linalg.solve(Smap.T @ M @ Smap, Smap.T @ f)
        assert_close(terms[engine]["vdot"][k], Smap @ vr, "constrained", "constrained_vdot",
                     f"{engine} KKT vs {other.name} reduced, state {k}")


def test_mjcf_export_round_trips_the_coupling(model, tmp_path):
    """The MJCF the harness writes carries the coupling as <equality><joint polycoef>, and
    the MJCF importer reads it back as the same coupling."""
    path = tmp_path / "gripper.xml"
    path.write_text(to_mjcf(model.spec))
    back, notes = load_mjcf_with_notes(str(path))
    assert back.couplings == model.spec.couplings
    assert [j.type for j in back.moving_joints()] == [j.type for j in model.spec.moving_joints()]
    assert any("coupled:" in n for n in notes)


def test_non_linear_polycoef_is_a_polynomial_coupling(model, tmp_path):
    """A quadratic polycoef is read as the polynomial q_f = 0.002 + 1.5 q_l + 0.5 q_l²
    (highest power first), and the MJCF the harness writes carries it back as the same
    polycoef (tests/conformance/test_mjcf_polycoef.py holds it against MuJoCo)."""
    text = to_mjcf(model.spec).replace('polycoef="0.002 1.5 0 0 0"',
                                       'polycoef="0.002 1.5 0.5 0 0"')
    assert 'polycoef="0.002 1.5 0.5 0 0"' in text
    path = tmp_path / "nonlinear.xml"
    path.write_text(text)
    back, _ = load_mjcf_with_notes(str(path))
    (k,) = back.couplings
    assert k.function == ("polynomial", (0.5, 1.5, 0.002))
    assert 'polycoef="0.002 1.5 0.5 0 0"' in to_mjcf(back)


def test_joint_equality_without_joint2_refused_in_one_line(model, tmp_path):
    text = to_mjcf(model.spec)
    start = text.index("<joint joint1=")
    end = text.index("/>", start)
    eq = text[start:end]
    text = text.replace(eq, eq[:eq.index(" joint2=")] + ' polycoef="0.002 0 0 0 0"')
    path = tmp_path / "no_joint2.xml"
    path.write_text(text)
    assert_bad_input(lambda p: load_mjcf_with_notes(p)[0], str(path), "without joint2")


def test_parity_prints_couplings_and_holds_them_natively(tmp_path):
    """The command line names the coupling and the five engines stage 3 compared it in;
    the exact native solvers (Pinocchio's KKT on its rows and its mimic joints, OpenSim's
    CoordinateCouplerConstraint) pass against their own engine's KKT answer."""
    out = tmp_path / "p"
    proc = run_cli("parity", "--urdf", GRIPPER, "--out", out, "--samples", "3", "--json",
                   tmp_path / "summary.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    follower, leader, mult, off = _file_mimic()
    line = (f"mimic_gripper: couplings: {follower} = {mult:g}·{leader} + {off:g} (compared "
            "in stage 3 through the KKT of 5 engines")
    assert line in proc.stdout, proc.stdout
    printed = [x for x in proc.stdout.splitlines() if x.startswith(line)]
    assert json.loads((tmp_path / "summary.json").read_text())["couplings"] == printed
    rows = {r["id"]: r for r in json.loads((out / "records.json").read_text())}
    for a, b in itertools.combinations(ENGINES, 2):
        assert rows[f"mimic_gripper/constrained/constrained_vdot/{a}~{b}"]["status"] == "passed"
    for who in ("pinocchio:forwardDynamics", "pinocchio:mimic", "opensim:realizeAcceleration"):
        assert rows[f"mimic_gripper/constrained/native_vdot/{who}"]["status"] == "passed"
    for who in ("mujoco:equality", "drake:SAP"):  # soft laws: shown, never scored
        assert rows[f"mimic_gripper/constrained/native_vdot/{who}"]["status"] == \
            "informational"


def test_parity_prints_a_frozen_mimic(tmp_path):
    """A mimic on a continuous joint cannot be a coupling: the joint is frozen and the
    command line says so."""
    text = GRIPPER.read_text().replace('<joint name="finger_joint1" type="prismatic">',
                                       '<joint name="finger_joint1" type="continuous">')
    path = tmp_path / "frozen.urdf"
    path.write_text(text)
    spec, _ = load_urdf_with_notes(str(path))
    assert {j.name: j.type for j in spec.joints}["finger_joint2"] == "fixed"
    assert spec.couplings == ()
    proc = run_cli("parity", "--urdf", path, "--out", tmp_path / "p", "--samples", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "mimic_gripper: frozen: finger_joint2 (mimic of finger_joint1" in proc.stdout


@pytest.mark.parametrize("coupling, expected", [
    (Coupling("nope", "finger_joint1"), "coupling nope: unknown follower joint 'nope'"),
    (Coupling("finger_joint2", "nope"), "coupling finger_joint2: unknown leader joint 'nope'"),
    (Coupling("finger_joint2", "finger_joint2"), "a joint cannot follow itself"),
    (Coupling("finger_joint2", "finger_joint1", float("nan")), "multiplier must be finite"),
    (Coupling("finger_joint2", "finger_joint1", 1.0, float("inf")), "offset must be finite"),
])
def test_bad_couplings_are_one_line_bad_input(coupling, expected):
    spec, _ = load_urdf_with_notes(str(GRIPPER))
    bad = dataclasses.replace(spec, couplings=(coupling,))
    with pytest.raises(BadInput) as e:
        bad.validate()
    assert "\n" not in str(e.value) and expected in e.value.problem, e.value.problem


def test_a_joint_follows_one_leader_and_couplings_join_one_dof_joints():
    spec, _ = load_urdf_with_notes(str(GRIPPER))
    two = dataclasses.replace(spec, couplings=spec.couplings + (
        Coupling("finger_joint2", "wrist"),))
    with pytest.raises(BadInput, match="finger_joint2 follow more than one leader"):
        two.validate()
    joints = tuple(dataclasses.replace(j, type="continuous", lower=None, upper=None)
                   if j.name == "wrist" else j for j in spec.joints)
    cont = dataclasses.replace(spec, joints=joints,
                               couplings=(Coupling("finger_joint2", "wrist"),))
    with pytest.raises(BadInput, match="leader joint wrist is continuous"):
        cont.validate()
    assert spec.digest() != dataclasses.replace(spec, couplings=()).digest()


def test_without_stage_3_the_coupling_is_said_not_compared(tmp_path):
    proc = run_cli("parity", "--urdf", GRIPPER, "--out", tmp_path / "p", "--samples", "2",
                   "--stages", "0,1,2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "mimic_gripper: couplings: finger_joint2 = 1.5·finger_joint1 + 0.002 (NOT " \
           "compared: stage 3 did not run)" in proc.stdout, proc.stdout
