"""The adapters' per-call fast paths of the floating-root conversions give the same
doubles as the generic conversions, and the cheap finiteness guard in front of Drake still
refuses every non-finite state (Drake aborts the process on one)."""
from __future__ import annotations

import numpy as np
import pytest

from harness.core.conventions import (
    quat_xyzw_to_matrix,
    root_convective_term,
    subtract_root_convective_term,
)
from harness.model import registry
from harness.model.prepared import prepare_fixture


def test_subtract_root_convective_term_matches_the_generic_subtraction_bitwise():
    rng = np.random.default_rng(3)
    for _ in range(2000):
        v = rng.normal(size=9) * 10.0 ** rng.uniform(-3, 3, size=9)
        a = rng.normal(size=9) * 10.0 ** rng.uniform(-3, 3, size=9)
        want = a.copy()
        want[0:6] -= root_convective_term(v[0:6])
        got = a.copy()
        subtract_root_convective_term(got, v)
        assert got.tobytes() == want.tobytes()
        got_list = a.copy()  # a list input takes the generic branch
        subtract_root_convective_term(got_list, list(v))
        assert got_list.tobytes() == want.tobytes()


def test_quaternion_fast_path_matches_the_generic_one_bitwise():
    rng = np.random.default_rng(4)
    for _ in range(2000):
        quat = rng.normal(size=4)
        fast = quat_xyzw_to_matrix(quat)
        generic = quat_xyzw_to_matrix(list(quat))
        assert fast.shape == (3, 3) and fast.flags.c_contiguous
        assert fast.tobytes() == generic.tobytes()


@pytest.mark.parametrize("fixture", ["free_body", "chain7"])
def test_drake_refuses_every_non_finite_state(fixture):
    model = prepare_fixture(fixture)
    lay = model.layout
    ad = registry.adapter_class("drake")(model)
    q = lay.random_q(np.random.default_rng(0))
    v = np.zeros(lay.nv)
    big = q.copy()
    big[0] = 1e308  # finite, however large: accepted
    ad.forward_dynamics(big, v + 1e308, v)
    for bad in (np.nan, np.inf, -np.inf):
        for which in ("q", "v"):
            qq, vv = q.copy(), v.copy()
            (qq if which == "q" else vv)[-1] = bad
            for call in (lambda: ad.forward_dynamics(qq, vv, v),
                         lambda: ad.inverse_dynamics(qq, vv, v),
                         lambda: ad.bias_forces(qq, vv)):
                with pytest.raises(FloatingPointError):
                    call()
