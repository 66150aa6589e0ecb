"""Stage-3 rows that are zero by structure are scored against the round-off of their own
terms (harness/stages/constrained/roundoff.py), not a 1e-30 floor. Units: m, rad, s.

Independent checks: a weld between two bodies of one chain holds the joints between them
still, so J̇v = 0 analytically (the two frames move as one rigid body; the sampled v holds
them still up to round-off, whose share of J̇v is bounded analytically); a weld that locks
every joint of a chain leaves v = 0 and v̇ = 0 analytically. Every engine's value is held
to that 0 within the row's bound, the rows pass in all five engines (they failed at the
1e-30 floor), a v̇ error of physical size still fails, and ``verify`` recomputes the
bound and refuses a bundle whose stored terms were altered."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from harness import api
from harness.core import io
from harness.core.tolerances import lookup
from harness.evidence import bundle as evidence
from harness.stages.constrained import roundoff

CHAIN = """<mujoco model="weld_chain">
  {compiler}
  <default><joint type="hinge" axis="0 1 0" damping="0.05"/></default>
  <worldbody>
    <body name="l1"><joint name="j1"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1"/>
      <body name="l2" pos="0.3 0 0"><joint name="j2" axis="1 0 0.3"/>
        <geom type="capsule" fromto="0 0 0 0.25 0 0.1" size="0.02" mass="0.8"/>
        <body name="l3" pos="0.25 0 0.1" {euler}><joint name="j3" axis="0 0 1"/>
          <geom type="capsule" fromto="0 0 0 0.2 0.05 0" size="0.02" mass="0.5"/>
          <body name="l4" pos="0.2 0.05 0"><joint name="j4"/>
            <geom type="capsule" fromto="0 0 0 0.15 0 -0.05" size="0.02" mass="0.3"/>
          </body></body></body></body>
  </worldbody>
  <equality><weld name="lock" body1="{a}" body2="{b}"/></equality>
</mujoco>
"""
RADIAN = CHAIN.format(compiler="", euler="", a="l2", b="l4")
DEGREE = CHAIN.format(compiler='<compiler angle="degree"/>', euler='euler="10 20 30"', a="l2",
                      b="l4")
LOCKED = CHAIN.format(compiler="", euler="", a="l4", b="l4").replace(' body2="l4"', "")
ONE_HINGE = """<mujoco model="weld_lock">
  <default><joint type="hinge" axis="0 1 0" damping="0.05"/></default>
  <worldbody>
    <body name="arm"><joint name="j1"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 -0.1" size="0.02" mass="1.2"/></body>
  </worldbody>
  <equality><weld name="lock" body1="arm"/></equality>
</mujoco>
"""


def _run(tmp_path, text, name):
    path = tmp_path / f"{name}.xml"
    path.write_text(text)
    out = tmp_path / name
    got = api.parity(mjcf=str(path), out=str(out), stages=["3"], samples=3)
    arrays = dict(np.load(out / "arrays.npz"))
    return got, arrays, out


def _bad(records):
    return [(r.id, r.reason) for r in records if r.status in ("failed", "error")]


@pytest.mark.parametrize("text", [RADIAN, DEGREE], ids=["radian", "degree"])
def test_weld_inside_a_chain_drift_is_zero_within_its_terms(tmp_path, text):
    got, arrays, _ = _run(tmp_path, text, "chain")
    assert not _bad(got.records)
    fx = got.records[0].fixture
    f = lookup("constrained", "constraint_drift_terms").atol
    T = arrays[roundoff.drift_key(fx)]
    assert T.min() > 0  # the states move: the drift's terms are not zero
    engines = [k.rsplit("/", 1)[1] for k in arrays
               if k.startswith(f"out/{fx}/constrained/constraint_drift/")]
    assert len(engines) == 5
    # J̇v is a sum of velocity products each with a factor of the welded joints' velocity
    # (j3, j4; 0 up to the sampling's round-off), so |J̇v| ≤ 2λ·Σ|v_rel|·Σ|v| analytically
    V = arrays[f"in/{fx}/constrained/v"]
    lam = arrays[roundoff.model_key(fx)][2]
    true = 2 * lam * np.abs(V[:, 2:]).sum(axis=1) * np.abs(V).sum(axis=1)
    assert np.all(V[0, 2:] == 0.0) and true.max() < 1e-10
    for e in engines:  # each engine within that and the bound of its terms
        d = np.abs(arrays[f"out/{fx}/constrained/constraint_drift/{e}"]).max(axis=1)
        assert np.all(d <= f * T + true), (e, d, f * T + true)
    drift = [r for r in got.records if r.quantity == "constraint_drift" and r.engine_b]
    assert len(drift) == 10 and all(r.status == "passed" for r in drift)
    assert any("round-off of its own terms" in r.reason for r in drift)


@pytest.mark.parametrize("text", [LOCKED, ONE_HINGE], ids=["four_hinges", "one_hinge"])
def test_locking_weld_vdot_is_zero_within_its_terms(tmp_path, text):
    got, arrays, out = _run(tmp_path, text, "locked")
    assert not _bad(got.records)
    fx = got.records[0].fixture
    np.testing.assert_array_equal(arrays[f"in/{fx}/constrained/v"], 0.0)  # nothing moves
    f = lookup("constrained", "kkt_terms").atol
    native = [r for r in got.records if r.quantity == "native_vdot" and r.passed is not None]
    assert {r.engine_a.split(":")[0] for r in native} >= {"pinocchio", "opensim"}
    pairs = {(r.engine_a, r.engine_b) for r in got.records if r.quantity == "constrained_vdot"
             and r.engine_b}
    assert len(pairs) == 10  # every engine's KKT answer, a 1 × 6 weld Jacobian included
    for r in native + [r for r in got.records if r.quantity == "constrained_vdot"
                       and r.engine_b]:
        T = roundoff.terms_of(r.quantity, r.key_a, r.key_b, arrays)
        for k in (r.key_a, r.key_b):  # v̇ = 0 analytically
            assert np.all(np.abs(arrays[k]).max(axis=1) <= f * T), (k, arrays[k], f * T)
    # a v̇ error of 1e-8 rad/s² (far below anything a model means) still fails
    r = native[0]
    T = roundoff.terms_of(r.quantity, r.key_a, r.key_b, arrays)
    assert 1e-8 > 5 * f * T.max()
    wrong = roundoff.terms_compare(r.id, r.fixture, r.quantity, r.engine_a, "",
                                   arrays[r.key_a] + 1e-8, arrays[r.key_b],
                                   lookup("constrained", r.quantity), r.key_a, r.key_b,
                                   None, "", T)
    assert wrong.status == "failed"
    assert api.verify(out) == []


def test_verify_recomputes_the_terms(tmp_path):
    """A bundle whose stored KKT terms were inflated (which would widen the bound), with its
    manifest re-sealed, is refused by the recomputation."""
    got, arrays, out = _run(tmp_path, LOCKED, "locked")
    fx, e = got.records[0].fixture, "pinocchio"
    arrays[roundoff.kkt_key(fx, e)] = arrays[roundoff.kkt_key(fx, e)] * 1e3
    (out / "arrays.npz").write_bytes(io.npz_bytes(arrays))
    m = json.loads((out / "manifest.json").read_text())
    m["arrays_file_sha256"] = hashlib.sha256((out / "arrays.npz").read_bytes()).hexdigest()
    m["manifest_sha256"] = evidence.manifest_digest(m)
    (out / "manifest.json").write_text(json.dumps(m))
    problems = api.verify(out)
    assert any(f"{roundoff.kkt_key(fx, e)} differs" in p for p in problems), problems
