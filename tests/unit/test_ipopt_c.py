"""Our ctypes binding of IPOPT's C interface (harness/fit/ipopt_c.py) against cyipopt on the
same library: identical iterations, status, history and solution on the pendulum and the
balance problem and on HS071; HS071's published optimum; a callback's exception reaches
the caller; IPOPT's refusal of an option is an error; a missing library falls back to
cyipopt with a warning."""
from __future__ import annotations

import numpy as np
import pytest

from harness.core.tolerances import lookup
from harness.fit import ipopt_c
from harness.fit import problems as P

# Both backends drive the same IPOPT build with the same inputs, so they agree to
# round-off; the table's bound is what the backend must meet to count as the same solver.
SAME = lookup("fit", "ipopt_backends")
SAME_REL = SAME.rtol
# HS071's optimum as published with 4 significant digits (Hock & Schittkowski no. 71):
# half a unit in the last digit.
HS071_X = np.array([1.0, 4.743, 3.821, 1.379])
HS071_F = 17.014
HS071_DIGITS = lookup("fit", "hs071_published").atol
# Both constraints are active at the optimum. IPOPT relaxes an inequality bound by its
# bound_relax_factor times max(1, |bound|) and solves to tol 1e-10 (OPTS).
BOUND_RELAX = lookup("fit", "ipopt_bound_relax").rtol


class HS071:
    """min x0 x3 (x0 + x1 + x2) + x2  s.t.  x0 x1 x2 x3 ≥ 25, Σ xi² = 40, 1 ≤ x ≤ 5."""
    n, m = 4, 2
    lb, ub = [1.0] * 4, [5.0] * 4
    cl, cu = [25.0, 40.0], [np.inf, 40.0]
    x0 = [1.0, 5.0, 5.0, 1.0]

    def __init__(self):
        self.history = []

    def objective(self, x):
        return x[0] * x[3] * np.sum(x[:3]) + x[2]

    def gradient(self, x):
        s = np.sum(x[:3])
        return np.array([x[3] * (s + x[0]), x[0] * x[3], x[0] * x[3] + 1.0, x[0] * s])

    def constraints(self, x):
        return np.array([np.prod(x), np.dot(x, x)])

    def jacobianstructure(self):
        return np.repeat([0, 1], 4), np.tile(np.arange(4), 2)

    def jacobian(self, x):
        return np.concatenate([np.prod(x) / x, 2 * x])

    def hessianstructure(self):
        return np.tril_indices(4)

    def hessian(self, x, lagrange, obj_factor):
        H = obj_factor * np.array([[2 * x[3], 0, 0, 0], [x[3], 0, 0, 0], [x[3], 0, 0, 0],
                                   [2 * x[0] + x[1] + x[2], x[0], x[0], 0]])
        H += lagrange[0] * np.array([[0, 0, 0, 0], [x[2] * x[3], 0, 0, 0],
                                     [x[1] * x[3], x[0] * x[3], 0, 0],
                                     [x[1] * x[2], x[0] * x[2], x[0] * x[1], 0]])
        H += lagrange[1] * 2 * np.eye(4)
        return H[self.hessianstructure()]

    def intermediate(self, alg_mod, iter_count, obj_value, *rest):
        self.history.append((iter_count, obj_value) + rest)
        return True


OPTS = {"print_level": 0, "sb": "yes", "tol": 1e-10}


def _solve_hs071(backend, obj=None, options=OPTS):
    obj = obj or HS071()
    if backend == "c":
        prob = ipopt_c.Problem(obj.n, obj.m, obj, obj.lb, obj.ub, obj.cl, obj.cu)
    else:
        import cyipopt
        prob = cyipopt.Problem(n=obj.n, m=obj.m, problem_obj=obj, lb=obj.lb, ub=obj.ub,
                               cl=obj.cl, cu=obj.cu)
    for k, v in options.items():
        prob.add_option(k, v)
    x, info = prob.solve(obj.x0)
    return x, info, obj


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))) if a.size else 0.0


def _same_fit(a, b):
    assert a.backend == "c" and b.backend == "cyipopt" and not a.warnings
    assert (a.iterations, a.status) == (b.iterations, b.status)  # messages: own wording
    assert len(a.history) == len(b.history)
    for ha, hb in zip(a.history, b.history):
        assert ha.keys() == hb.keys() and ha["iter"] == hb["iter"]
        assert all(_rel(ha[k], hb[k]) <= SAME_REL for k in ("objective", "mu")), (ha, hb)
    assert _rel(a.theta, b.theta) <= SAME_REL
    assert all(_rel(a.params[k], b.params[k]) <= SAME_REL for k in b.params)


def test_pendulum_same_as_cyipopt():
    _, _, ym = P.pendulum_data(200, seed=0)
    for p0 in (1.0, 20.0):
        c = P.pendulum_collocator(ym, p0)
        a, b = c.solve(backend="c"), c.solve(backend="cyipopt")
        assert a.converged
        _same_fit(a, b)


def test_balance_same_as_cyipopt():
    _, acc, _, xm = P.balance_data(400, seed=0)
    c = P.balance_collocator(acc, xm)
    a, b = c.solve(backend="c"), c.solve(backend="cyipopt")
    assert a.converged
    _same_fit(a, b)


def test_hs071_optimum_and_same_as_cyipopt():
    x, info, obj = _solve_hs071("c")
    assert info["status"] == 0 and info["status_name"] == "Solve_Succeeded"
    assert np.all(np.abs(x - HS071_X) <= HS071_DIGITS), x
    assert abs(info["obj_val"] - HS071_F) <= HS071_DIGITS
    g = obj.constraints(x)
    assert np.all(np.abs(g - [25.0, 40.0]) <= BOUND_RELAX * np.array([25.0, 40.0])
                  + OPTS["tol"]), g - [25.0, 40.0]
    assert np.allclose(info["g"], g, rtol=SAME.rtol, atol=SAME.atol)
    xc, ic, oc = _solve_hs071("cyipopt")
    assert _rel(x, xc) <= SAME_REL and ic["status"] == info["status"]
    for k in ("obj_val", "g", "mult_g", "mult_x_L", "mult_x_U"):
        assert _rel(info[k], ic[k]) <= SAME_REL, k
    assert info["status_name"] == "Solve_Succeeded" and ic["status"] == 0
    assert len(obj.history) == len(oc.history) and obj.history[0] == oc.history[0]


class _Boom(RuntimeError):
    pass


@pytest.mark.parametrize("where", ["objective", "jacobian", "hessian", "intermediate"])
def test_callback_exception_propagates(where):
    obj = HS071()
    calls = []
    orig = getattr(obj, where)

    def failing(*a):
        calls.append(1)
        if len(calls) == 3:
            raise _Boom(where)
        return orig(*a)
    setattr(obj, where, failing)
    with pytest.raises(_Boom, match=where):
        _solve_hs071("c", obj)
    assert len(calls) == 3          # nothing of ours ran after the exception


def test_intermediate_false_stops():
    obj = HS071()
    obj.intermediate = lambda alg_mod, iter_count, *a: iter_count < 2
    x, info, _ = _solve_hs071("c", obj)
    assert info["status"] == 5 and info["status_name"] == "User_Requested_Stop"


def test_invalid_option_is_an_error():
    with pytest.raises(ValueError, match="no_such_option"):
        _solve_hs071("c", options={**OPTS, "no_such_option": 1.0})
    with pytest.raises(ValueError, match="tol"):             # a number given as a string
        _solve_hs071("c", options={**OPTS, "tol": "small"})


def test_missing_library_falls_back_with_warning(monkeypatch):
    def unavailable():
        raise ipopt_c.IpoptCUnavailable("test: no library")
    monkeypatch.setattr(ipopt_c, "load", unavailable)
    _, _, ym = P.pendulum_data(200, seed=0)
    r = P.pendulum_collocator(ym, 20.0).solve()
    assert r.backend == "cyipopt" and r.converged
    assert len(r.warnings) == 1 and "no library" in r.warnings[0]
