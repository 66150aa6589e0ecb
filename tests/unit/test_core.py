"""Engine-blind core: conventions, spec validation, comparison arithmetic, tolerance table,
registry behaviour for unavailable engines."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

from fixtures import catalog
from harness.core import conventions as cv
from harness.core.errors import BadInput
from harness.core.records import measure
from harness.core.spec import Body, FixtureSpec, Joint
from harness.core.tolerances import TABLE, Tolerance, lookup
from harness.model import registry
from harness.stages import STAGES
from tests.conftest import assert_close


def test_rotation_helpers_against_scipy(rng):
    for _ in range(20):
        rpy = rng.uniform(-3, 3, size=3)
        R = Rotation.from_euler("xyz", rpy).as_matrix()  # extrinsic x, y, z = Rz Ry Rx
        assert_close(cv.rpy_to_matrix(rpy), R, "conformance", "analytic", "rpy")
        assert_close(cv.rpy_to_matrix(cv.matrix_to_rpy(R)), R, "conformance", "analytic", "rpy⁻¹")
        quat = Rotation.from_matrix(R).as_quat()  # x y z w
        assert_close(cv.quat_xyzw_to_matrix(quat), R, "conformance", "analytic", "quat")
        wxyz = cv.matrix_to_quat_wxyz(R)
        assert_close(cv.quat_xyzw_to_matrix(cv.quat_wxyz_to_xyzw(wxyz)), R, "conformance",
                     "analytic", "matrix→quat")


def test_se3_left_jacobian_is_the_exponential_translation(rng):
    """exp of the twist [ω]× , v over unit time: translation = V(ω) v (matrix exponential)."""
    for scale in (1e-9, 1e-4, 0.3, 2.5):
        w, v = rng.normal(size=3) * scale, rng.normal(size=3)
        T = np.zeros((4, 4))
        T[:3, :3], T[:3, 3] = cv.skew(w), v
        assert_close(cv.se3_left_jacobian(w) @ v, expm(T)[:3, 3], "conformance", "analytic",
                     f"V at |ω|={scale}")


def test_layout_of_tree_floating():
    lay = cv.Layout.from_spec(catalog.get("tree_floating"))
    assert (lay.nq, lay.nv) == (21, 19)
    assert lay.slots[0].type == "free" and lay.slots[-1].type == "continuous"
    q = lay.random_q(np.random.default_rng(0))
    lay.check_q(q)
    assert np.linalg.norm(q[3:7]) == pytest.approx(1.0)
    for s in lay.slots:
        if s.lower is not None:
            assert s.lower <= q[s.iq] <= s.upper
    with pytest.raises(ValueError, match="unit norm"):
        bad = q.copy()
        bad[3:7] *= 2
        lay.check_q(bad)


def test_combine_inertias_parallel_axis():
    # two point masses 1 kg at ±1 m on x: I about com = diag(0, 2, 2)
    m, c, I = cv.combine_inertias([(1.0, np.array([1.0, 0, 0]), np.zeros((3, 3))),
                                   (1.0, np.array([-1.0, 0, 0]), np.zeros((3, 3)))])
    assert m == 2.0 and np.array_equal(c, np.zeros(3))
    assert_close(I, np.diag([0.0, 2.0, 2.0]), "conformance", "analytic", "parallel axis")


def _spec(**kw):
    base = dict(name="t",
                bodies=(Body("a", 0.0),
                        Body("b", 1.0, (0, 0, 0), (0.1, 0, 0, 0, 0.1, 0, 0, 0, 0.1))),
                joints=(Joint("j", "revolute", "a", "b", lower=-1.0, upper=1.0),))
    base.update(kw)
    return FixtureSpec(**base)


@pytest.mark.parametrize("change,msg", [
    (dict(bodies=(Body("a", 0.0), Body("b", -1.0))), "mass"),
    (dict(bodies=(Body("a", 0.0), Body("b", 1.0, (0, 0, 0), (1, 0, 0, 0, 1, 0, 0, 0, 5)))),
     "triangle"),
    (dict(bodies=(Body("a", 0.0), Body("b", 1.0, (0, 0, 0), (1, 2, 0, 0, 1, 0, 0, 0, 1)))),
     "symmetric"),
    (dict(joints=(Joint("j", "revolute", "a", "c"),)), "unknown body"),
    (dict(joints=(Joint("j", "planar", "a", "b"),)), "unsupported type"),
    (dict(joints=(Joint("j", "revolute", "a", "b", axis=(0, 0, 2)),)), "unit"),
    (dict(joints=(Joint("j", "revolute", "a", "b", lower=1.0, upper=-1.0),)), "lower limit"),
    (dict(joints=(Joint("j", "revolute", "a", "b", damping=float("nan")),)), "damping"),
    (dict(bodies=(Body("a", 0.0), Body("a\x07", 1.0))), "not allowed"),
    (dict(bodies=(Body("a", 0.0), Body("", 1.0))), "not allowed"),
    (dict(bodies=(Body("a", 0.0), Body("a", 1.0))), "duplicate"),
    (dict(bodies=(Body("a", 0.0), Body("b", 0.0))), "massless"),
])
def test_spec_validation_names_the_problem(change, msg):
    with pytest.raises(BadInput, match=msg):
        _spec(**change).validate()


def test_measure_is_normwise_relative():
    tol = Tolerance(0.0, 1e-3, "test")
    a = np.array([[1000.0, 0.0], [1.0, 1.0]])
    b = np.array([[1000.5, 0.4], [1.0, 1.0]])  # entry 0.4 vs 0 is fine relative to 1000
    max_abs, max_rel, worst, ok = measure(a, b, tol)
    assert ok and max_abs == pytest.approx(0.5) and worst == 0
    assert max_rel == pytest.approx(0.5 / 1000.5)
    b[1, 1] = 1.01
    assert measure(a, b, tol)[3] is False and measure(a, b, tol)[2] == 1
    b[1, 1] = np.nan
    assert measure(a, b, tol)[3] is False


def test_every_stage_quantity_has_a_reasoned_tolerance():
    for st in STAGES:
        for q in st.quantities:
            t = lookup(st.name, q.name)
            assert t.atol >= 0 and t.rtol >= 0 and len(t.reason) > 20
    for key, t in TABLE.items():  # the float32 class: round-off of float32, ≤ 1e-3 (its cap)
        assert t.reason and t.rtol <= 1e-6 or key[1].endswith("finite_difference") or \
            (key[1].endswith("/float32") and t.rtol <= 1e-3)


def test_unavailable_engine_is_reported_and_fails_unless_allowed(monkeypatch, tmp_path, capsys):
    from harness import cli

    monkeypatch.setitem(registry._cache, "drake", registry.EngineInfo(
        "drake", False, "1.51.1", "ImportError: simulated"))
    rc = cli.main(["parity", "--fixture", "pendulum", "--out", str(tmp_path / "a"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "drake is unavailable" in err and "--allow-missing drake" in err
    assert not (tmp_path / "a").exists()
    rc = cli.main(["parity", "--fixture", "pendulum", "--out", str(tmp_path / "b"), "--quiet",
                   "--allow-missing", "drake"])
    assert rc == 0
    import json
    m = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert "drake" in m["unavailable_engines"] and "drake" not in m["engines"]
    assert "Unavailable engines" in (tmp_path / "b" / "index.html").read_text()


def test_model_where_nothing_moves_is_bad_input():
    spec = FixtureSpec(name="static",
                       bodies=(Body("a", 1.0, (0, 0, 0), (0.1, 0, 0, 0, 0.1, 0, 0, 0, 0.1)),),
                       joints=())
    with pytest.raises(BadInput, match="nothing moves"):
        spec.validate()
    dataclasses.replace(spec, floating=True).validate()  # a free-flying body is fine
