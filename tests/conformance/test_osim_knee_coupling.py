"""gait2392's knee through its couplings against OpenSim's own knee.

OpenSim holds each knee as one CustomJoint: the angle, and two translations that are
SimmSplines of it. The import gives each translation a joint of its own held by a
non-linear coupling (stage 3's row). Reduced through the couplings — v = S v_r,
M_r = SᵀMS, h_r = Sᵀ(h + M Ṡv_r), v̇_r = M_r⁻¹(τ_r − h_r), S and Ṡv_r from OpenSim's own
spline values and derivatives (not the harness's spline code) — every engine's M, h and v̇
of the full model must be OpenSim's native ones at the same coordinates."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import opensim as osim
import pytest

from harness.core.coupling_function import evaluate
from harness.core.tolerances import lookup
from harness.model import registry
from harness.model.osim_import import load_osim_with_notes
from harness.model.prepared import PreparedModel
from tests.conftest import ENGINES, ROOT, assert_close

GAIT = ROOT / "data" / "opensim_models" / "gait2392_thelen2003muscle.osim"
AXES = {"rotation1": 0, "rotation2": 1, "rotation3": 2, "translation1": 3,
        "translation2": 4, "translation3": 5}


class Native:
    """OpenSim's own gait2392 (the .osim as written): M, h (gravity only: muscles apply
    no force here) and v̇ in its coordinate order."""

    def __init__(self) -> None:
        self.model = osim.Model(str(GAIT))
        self.state = self.model.initSystem()
        self.coords = list(self.model.getCoordinateSet())
        self.names = [c.getName() for c in self.coords]
        self.matter = self.model.getMatterSubsystem()
        nu = self.state.getNU()
        self.u_index = []
        for c in self.coords:  # which u each coordinate's speed is
            s = osim.State(self.state)
            s.setU(osim.Vector(nu, 0.0))
            c.setSpeedValue(s, 1.0)
            self.u_index.append(int(np.flatnonzero(s.getU().to_numpy())[0]))

    def axis_function(self, joint: str, label: str):
        cj = osim.CustomJoint.safeDownCast(self.model.getJointSet().get(joint))
        return cj.getSpatialTransform().getTransformAxis(AXES[label]).getFunction()

    def terms(self, q: dict, v: dict, tau: np.ndarray) -> tuple:
        s = self.state
        for c in self.coords:
            c.setValue(s, q[c.getName()], False)
        for c in self.coords:
            c.setSpeedValue(s, v[c.getName()])
        self.model.realizeDynamics(s)
        u = self.u_index
        M = osim.Matrix()
        self.matter.calcM(s, M)
        M = M.to_numpy()[np.ix_(u, u)]
        body = self.model.getGravityBodyForces(s)
        nu = s.getNU()
        r = osim.Vector()
        self.matter.calcResidualForceIgnoringConstraints(s, osim.Vector(nu, 0.0), body,
                                                         osim.Vector(nu, 0.0), r)
        tau_o = np.zeros(nu)
        tau_o[u] = tau
        udot, A = osim.Vector(), osim.VectorOfSpatialVec()
        self.matter.calcAcceleration(s, osim.Vector.createFromMat(tau_o), body, udot, A)
        return M, r.to_numpy()[u], udot.to_numpy()[u]


# OpenSim's f, f', f'' of the model's knee splines and of a polynomial, evaluated in a
# separate interpreter: calcDerivative takes a SWIG std::vector<int> (osim.StdVectorInt),
# and OpenSim and ezc3d register that type under one name in SWIG's shared type table, so
# whichever module builds one first breaks the other's in the same process (measured: after
# this call in the test process, every later ezc3d C3D write raised TypeError).
_REFERENCE = r"""
import json, sys
import opensim as osim
osim.Logger.removeFileSink()  # no opensim.log in the working folder
req = json.load(sys.stdin)
model = osim.Model(req["model"])
out = []
for r in req["requests"]:
    if "poly" in r:
        fn = osim.PolynomialFunction(osim.Vector(r["poly"]))
    else:
        cj = osim.CustomJoint.safeDownCast(model.getJointSet().get(r["joint"]))
        fn = cj.getSpatialTransform().getTransformAxis(r["axis"]).getFunction()
    out.append([[fn.calcValue(osim.Vector(1, x))]
                + [fn.calcDerivative(osim.StdVectorInt([0] * k), osim.Vector(1, x))
                   for k in (1, 2)] for x in r["xs"]])
print(json.dumps(out))
"""


def _opensim_values(requests: list) -> list:
    """[[(f, f', f'') per x] per request]: OpenSim's own values of a CustomJoint axis's
    function ({"joint", "axis", "xs"}) of gait2392 or of PolynomialFunction ({"poly",
    "xs"}), from a separate interpreter (see _REFERENCE)."""
    proc = subprocess.run([sys.executable, "-c", _REFERENCE], check=True, text=True,
                          capture_output=True,
                          input=json.dumps({"model": str(GAIT), "requests": requests}))
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def native():
    return Native()


@pytest.fixture(scope="module")
def model():
    spec, _ = load_osim_with_notes(str(GAIT))
    return PreparedModel(spec, str(GAIT))


@pytest.fixture(scope="module")
def states(native, model):
    """Three states: (q_r, v_r, τ_r) by OpenSim's coordinate names, and the full model's
    q (nq,), S (nv, n_r), Ṡv_r (nv,): the followers at OpenSim's spline values."""
    rng = np.random.default_rng(7)
    spec, lay = model.spec, model.layout
    assert {c.follower for c in spec.couplings} == {
        f"knee_{s}_translation{k}" for s in "rl" for k in (1, 2)}
    out = []
    for _ in range(3):
        q_r = {n: float(rng.uniform(-0.5, 0.5)) for n in native.names}
        for side in "rl":  # the knee over most of its range, where the splines bend
            q_r[f"knee_angle_{side}"] = float(rng.uniform(-2.0, 0.1))
        v_r = {n: float(rng.normal()) for n in native.names}
        tau = rng.normal(size=len(native.names))
        q = lay.neutral()
        S = np.zeros((lay.nv, len(native.names)))
        sdot = np.zeros(lay.nv)
        for i, n in enumerate(native.names):
            q[lay.slot(n).iq] = q_r[n]
            S[lay.slot(n).iv, i] = 1.0
        out.append((q_r, v_r, tau, q, S, sdot))
    requests = [{"joint": c.follower.rsplit("_", 1)[0],
                 "axis": AXES[c.follower.rsplit("_", 1)[1]],
                 "xs": [0.0] + [st[0][c.leader] for st in out]} for c in spec.couplings]
    values = _opensim_values(requests)
    for c, vals in zip(spec.couplings, values, strict=True):
        f = lay.slot(c.follower)
        for (q_r, v_r, _, q, S, sdot), (f0, f1, f2) in zip(out, vals[1:], strict=True):
            q[f.iq] = f0 - vals[0][0]  # its zero: the leader's zero
            S[f.iv, native.names.index(c.leader)] = f1
            sdot[f.iv] = f2 * v_r[c.leader] ** 2
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_reduced_knee_dynamics_match_opensims_own(engine, native, model, states):
    ad = registry.adapter_class(engine)(model)
    for k, (q_r, v_r, tau, q, S, sdot) in enumerate(states):
        M_o, h_o, vd_o = native.terms(q_r, v_r, tau)
        v = S @ np.array([v_r[n] for n in native.names])
        M = ad.mass_matrix(q)
        Mr = S.T @ M @ S
        hr = S.T @ (ad.bias_forces(q, v) + M @ sdot)
        what = f"{engine} state {k}"
        assert_close(Mr, M_o, "import", "osim_reduced_dynamics", f"{what} M")
        assert_close(hr, h_o, "import", "osim_reduced_dynamics", f"{what} h")
        assert_close(np.linalg.solve(Mr, tau - hr), vd_o, "import", "osim_reduced_dynamics",
                     f"{what} v̇")


def _splines(model) -> list:
    """[(joint name, axis index, SimmSpline)] of every SimmSpline of the model's
    CustomJoint axes (OpenSim's objects)."""
    out = []
    for j in model.getJointSet():
        cj = osim.CustomJoint.safeDownCast(j)
        for k in range(6 if cj is not None else 0):
            fn = cj.getSpatialTransform().getTransformAxis(k).getFunction()
            if fn.getConcreteClassName() == "SimmSpline":
                out.append((j.getName(), k, osim.SimmSpline.safeDownCast(fn)))
    return out


def test_coupling_functions_are_opensims(native):
    """f, f', f'' of the harness's spline (stage 3's rows) against OpenSim's SimmSpline
    on gait2392's knee splines — inside, outside (the end slopes) and at the knots — and
    of its polynomial against OpenSim's PolynomialFunction (highest power first)."""
    tol = lookup("import", "osim_coupling_function")
    rng = np.random.default_rng(11)
    cases = []
    for joint, axis, sp in _splines(native.model):
        n = sp.getNumberOfPoints()
        fn = ("spline", tuple(sp.getX(i) for i in range(n)), tuple(sp.getY(i) for i in range(n)))
        xs = [float(x) for x in rng.uniform(fn[1][0] - 0.5, fn[1][-1] + 0.5, 12)] + list(fn[1])
        cases.append(({"joint": joint, "axis": axis, "xs": xs}, fn, xs))
    assert len(cases) == 4
    coef = (0.3, -1.2, 0.5, 2.0)
    xs = [-1.3, 0.2, 2.7]
    cases.append(({"poly": list(coef), "xs": xs}, ("polynomial", coef), xs))
    ref = _opensim_values([req for req, _, _ in cases])
    for (_, fn, xs), want_rows in zip(cases, ref, strict=True):
        for x, want3 in zip(xs, want_rows, strict=True):
            got = evaluate(fn, x)
            for order in range(3):
                want = want3[order]
                assert abs(got[order] - want) <= max(tol.atol, tol.rtol * abs(want)), \
                    (fn[0], x, order, got[order], want)
