"""The residual reduction's damped step (harness/track/reduce.py ``_damped_solve``): the
Woodbury form against the dense solve of (JᵀJ + diag(D)) x = b it stands for, on random
systems of the reduction's shape (M root residuals ≪ N frame values)."""
from __future__ import annotations

import numpy as np
import pytest

from harness.track.reduce import _damped_solve
from tests.conftest import assert_close


@pytest.mark.parametrize("M, N, seed", [(18, 69, 0), (36, 230, 1), (60, 60, 2)])
def test_the_woodbury_step_is_the_dense_solve(M, N, seed):
    rng = np.random.default_rng(seed)
    J = rng.normal(size=(M, N)) * rng.uniform(0.1, 100.0, size=N)   # unequal columns
    W = rng.uniform(1.0, 1e4, size=N)                                # tracking weights
    d = np.einsum("ij,ij->j", J, J) + W
    for lam in (1e-9, 1e-3, 10.0):
        D = W + lam * d
        b = rng.normal(size=N)
        dense = np.linalg.solve(J.T @ J + np.diag(D), b)
        assert_close(_damped_solve(J, D, b), dense, "track", "reduction_step_solve",
                     f"M={M} N={N} lam={lam}")
