"""Contact conformance (stage "contact"): every engine's contact-point kinematics against
the closed form of a floating rigid body, and the shared-law contact forces, generalized
forces and accelerations of every engine against every other on the seeded contact
states (the parity claim: ≤ 1e-10 relative)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from fixtures.contact_catalog import SCENES
from harness.core.conventions import quat_xyzw_to_matrix, skew
from harness.core.records import measure
from harness.core.tolerances import lookup
from harness.model.contact_law import frame_points
from harness.stages.base import Inputs
from harness.stages.contact import stage as contact_stage
from harness.stages.runner import fixture_rng
from tests.conftest import ENGINES, adapter, assert_close

CONTACT_FIXTURES = sorted(SCENES)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fixture", CONTACT_FIXTURES)
def test_contact_frame_kinematics_match_rigid_body_closed_form(engine, fixture):
    """p_WF = p + R c and J_WF = [[R, −R[c]×], [0, R]] for frames at c on a floating body
    (canonical v = [v_B, ω_B]); Crocoddyl answers through its own residual models."""
    a = adapter(engine, fixture)
    spec = a.model.spec
    frames = [g.frame for g in SCENES[fixture].geometry]
    offs = {f.name: np.array(f.xyz) for f in spec.frames}
    rng = np.random.default_rng(11)
    for _ in range(3):
        q = a.layout.random_q(rng)
        R = quat_xyzw_to_matrix(q[3:7])
        p, J = frame_points(a, q, frames)
        for i, f in enumerate(frames):
            c = offs.get(f, np.zeros(3))
            J_ref = np.block([[R, -R @ skew(c)], [np.zeros((3, 3)), R]])
            assert_close(p[i], q[:3] + R @ c, "conformance", "analytic", f"{engine} p_WF {f}")
            assert_close(J[i], J_ref, "conformance", "analytic", f"{engine} J_WF {f}")


@pytest.mark.parametrize("fixture", CONTACT_FIXTURES)
def test_shared_law_contact_quantities_agree_across_the_four_engines(fixture):
    model = adapter("pinocchio", fixture).model
    inputs = Inputs.sample(model, 9, fixture_rng(0, fixture))
    Q, V, _, labels = contact_stage.contact_states(model, inputs)
    # the seeded states do touch: every state has an active contact, some slide, some stick
    from harness.model.contact_law import contact_kinematics
    kin = [contact_kinematics(adapter("pinocchio", fixture), q, SCENES[fixture]) for q in Q]
    assert all((k.phi < 0).any() for k in kin)
    assert any("sticking" in s for s in labels) and any("sliding" in s for s in labels)
    outs = {e: {qty.name: qty.compute(adapter(e, fixture), inputs)
                for qty in contact_stage.QUANTITIES} for e in ENGINES}
    for name in outs["pinocchio"]:
        tol = lookup("contact", name)
        assert np.abs(outs["pinocchio"][name]).max() > 0, name
        for a, b in itertools.combinations(ENGINES, 2):
            max_abs, max_rel, worst, ok = measure(outs[a][name], outs[b][name], tol)
            assert ok, f"{fixture} {name} {a}~{b}: max_rel {max_rel:.3e} at {labels[worst]}"
