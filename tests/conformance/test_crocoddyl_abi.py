"""Guard for the pin/crocoddyl ABI trap (docs/engines.md): with pin 4.1.0, crocoddyl
3.2.1 imports fine and its forward dynamics silently drops gravity. Crocoddyl's own
DifferentialActionModelFreeFwdDynamics must equal pin.aba *with gravity* here."""
from __future__ import annotations

import crocoddyl
import numpy as np
import pinocchio as pin
import pytest

from engines.pinocchio import build_pinocchio_model
from harness.model.prepared import prepare_fixture
from tests.conftest import FIXTURES, assert_close


@pytest.mark.parametrize("fixture", FIXTURES)
def test_crocoddyl_forward_dynamics_equals_aba_with_gravity(fixture):
    pm, _, _ = build_pinocchio_model(prepare_fixture(fixture))
    pd = pm.createData()
    state = crocoddyl.StateMultibody(pm)
    dam = crocoddyl.DifferentialActionModelFreeFwdDynamics(
        state, crocoddyl.ActuationModelFull(state), crocoddyl.CostModelSum(state, pm.nv))
    data = dam.createData()
    rng = np.random.default_rng(1)
    pin.seed(1)  # randomConfiguration draws from pinocchio's own generator
    for _ in range(5):
        q = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
        v, u = rng.normal(size=pm.nv), rng.normal(size=pm.nv)
        dam.calc(data, np.concatenate([q, v]), u)
        ref = pin.aba(pm, pd, q, v, u)
        assert_close(data.xout, ref, "conformance", "abi_forward_dynamics", fixture)
        # gravity really is in both: switching it off changes the accelerations by
        # exactly -M⁻¹·G(q), G the generalized gravity at q (nonzero at these states)
        grav = pin.computeGeneralizedGravity(pm, pd, q).copy()
        mass = pin.crba(pm, pd, q)
        mass = np.triu(mass) + np.triu(mass, 1).T
        g = pm.gravity.linear.copy()
        pm.gravity.linear = np.zeros(3)
        no_g = pin.aba(pm, pd, q, v, u)
        pm.gravity.linear = g
        assert np.abs(grav).max() > 1e-3, "a state where gravity has no torque"
        assert_close(ref - no_g, -np.linalg.solve(mass, grav), "conformance",
                     "abi_forward_dynamics", fixture)
