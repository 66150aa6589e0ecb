"""Non-linear joint couplings q_f = f(q_l): the functions OpenSim models couple joints by,
and MuJoCo's quartic joint equality (an MJCF ``polycoef``, read as a polynomial).

Dimensions and units: x is the leader's canonical coordinate [rad | m], f(x) the
follower's [rad | m]; f' [1 | m/rad | rad/m] and f'' [per unit of x²] accordingly.

A function is a tuple (hashable, written to JSON as a list), one of

* ``("spline", (x_0, …, x_{n−1}), (y_0, …, y_{n−1}))``: OpenSim's SimmSpline — the cubic
  spline through the knots (x strictly increasing, n ≥ 2) whose end conditions match the
  third derivative of the cubic through the first (last) four knots (divided
  differences; a straight line for n = 2, no end condition for n = 3); outside
  [x_0, x_{n−1}] it continues along the end slope (f'' = 0 there), as OpenSim's does;
* ``("polynomial", (c_0, …, c_n))``: c_0 xⁿ + c_1 x^(n−1) + … + c_n (OpenSim's
  PolynomialFunction order, highest power first).

``evaluate`` returns (f, f', f'') computed with the operations OpenSim's SimmSpline uses
(the same coefficients, the same Horner forms), so the two agree to round-off; the
harness's stage-3 rows g = q_f − f(q_l), J = e_f − f'(q_l) e_l, J̇v = −f''(q_l) v_l² are
built from them (harness/stages/constrained/constraints.py).
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

KINDS = ("spline", "polynomial")
TINY = 1e-12  # OpenSim's TINY_NUMBER: the smallest knot spacing the spline divides by
ENDPOINT = 2e-13  # [x units] OpenSim's ROUNDOFF_ERROR: x this close to an end knot is it


def check(fn: tuple[Any, ...]) -> str:
    """'' if ``fn`` is a well-formed coupling function, else a one-line problem."""
    if not isinstance(fn, tuple) or not fn or fn[0] not in KINDS:
        return f"unknown coupling function {str(fn)[:60]!r} (kinds: {', '.join(KINDS)})"
    if fn[0] == "polynomial":
        c = fn[1] if len(fn) == 2 else None
        if not (isinstance(c, tuple) and c and all(isinstance(a, float) and math.isfinite(a)
                                                   for a in c)):
            return "a polynomial coupling needs finite coefficients"
        return ""
    if len(fn) != 3:
        return "a spline coupling needs its knots (x, y)"
    x, y = fn[1], fn[2]
    if not (isinstance(x, tuple) and isinstance(y, tuple) and len(x) == len(y) >= 2):
        return "a spline coupling needs as many x as y knots, at least two"
    if not all(isinstance(a, float) and math.isfinite(a) for a in x + y):
        return "a spline coupling's knots must be finite numbers"
    if any(b <= a for a, b in zip(x, x[1:])):
        return "a spline coupling's x knots must increase strictly"
    return ""


def describe(fn: tuple[Any, ...]) -> str:
    """Short text of ``fn``: 'spline(12 knots)', 'polynomial(degree 3)'."""
    if fn[0] == "spline":
        return f"spline({len(fn[1])} knots)"
    return f"polynomial(degree {len(fn[1]) - 1})"


@lru_cache(maxsize=256)
def _spline_coefficients(x: tuple[float, ...], y: tuple[float, ...]
                         ) -> tuple[NDArray[np.float64], NDArray[np.float64],
                                    NDArray[np.float64]]:
    """(b, c, d) (n,) each: f = y_k + dx (b_k + dx (c_k + dx d_k)) on [x_k, x_k+1], the
    SimmSpline coefficients, step for step as OpenSim computes them (a tridiagonal
    solve with the divided-difference end conditions)."""
    n = len(x)
    b, c, d = np.zeros(n), np.zeros(n), np.zeros(n)
    if n == 2:
        t = max(TINY, x[1] - x[0])
        b[0] = b[1] = (y[1] - y[0]) / t
        return b, c, d
    nm1, nm2 = n - 1, n - 2
    d[0] = max(TINY, x[1] - x[0])
    c[1] = (y[1] - y[0]) / d[0]
    for i in range(1, nm1):
        d[i] = max(TINY, x[i + 1] - x[i])
        b[i] = 2.0 * (d[i - 1] + d[i])
        c[i + 1] = (y[i + 1] - y[i]) / d[i]
        c[i] = c[i + 1] - c[i]
    b[0], b[nm1] = -d[0], -d[nm2]
    c[0] = c[nm1] = 0.0
    if n > 3:
        d31, d20 = max(TINY, x[3] - x[1]), max(TINY, x[2] - x[0])
        d1, d2 = max(TINY, x[nm1] - x[n - 3]), max(TINY, x[nm2] - x[n - 4])
        d30, d3 = max(TINY, x[3] - x[0]), max(TINY, x[nm1] - x[n - 4])
        c[0] = c[2] / d31 - c[1] / d20
        c[nm1] = c[nm2] / d1 - c[n - 3] / d2
        c[0] = c[0] * d[0] * d[0] / d30
        c[nm1] = -c[nm1] * d[nm2] * d[nm2] / d3
    for i in range(1, n):  # forward elimination
        t = d[i - 1] / b[i - 1]
        b[i] -= t * d[i - 1]
        c[i] -= t * c[i - 1]
    c[nm1] /= b[nm1]  # back substitution
    for j in range(nm1):
        i = nm2 - j
        c[i] = (c[i] - d[i] * c[i + 1]) / b[i]
    b[nm1] = (y[nm1] - y[nm2]) / d[nm2] + d[nm2] * (c[nm2] + 2.0 * c[nm1])
    for i in range(nm1):
        b[i] = (y[i + 1] - y[i]) / d[i] - d[i] * (c[i + 1] + 2.0 * c[i])
        d[i] = (c[i + 1] - c[i]) / d[i]
        c[i] *= 3.0
    c[nm1] *= 3.0
    d[nm1] = d[nm2]
    return b, c, d


def _spline(x: tuple[float, ...], y: tuple[float, ...], a: float
            ) -> tuple[float, float, float]:
    b, c, d = _spline_coefficients(x, y)
    n = len(x)
    if a < x[0]:
        return y[0] + (a - x[0]) * b[0], float(b[0]), 0.0
    if a > x[-1]:
        return y[-1] + (a - x[-1]) * b[-1], float(b[-1]), 0.0
    if abs(a - x[0]) <= ENDPOINT:
        return y[0], float(b[0]), float(2.0 * c[0])
    if abs(a - x[-1]) <= ENDPOINT:
        return y[-1], float(b[-1]), float(2.0 * c[-1])
    k = 0
    if n >= 3:  # the same binary search as OpenSim's
        i, j = 0, n
        while True:
            k = (i + j) // 2
            if a < x[k]:
                j = k
            elif a > x[k + 1]:
                i = k
            else:
                break
    dx = a - x[k]
    return (float(y[k] + dx * (b[k] + dx * (c[k] + dx * d[k]))),
            float(b[k] + dx * (2.0 * c[k] + 3.0 * dx * d[k])),
            float(2.0 * c[k] + 6.0 * dx * d[k]))


def quartic_coefficients(fn: tuple[Any, ...]) -> tuple[float, ...] | None:
    """(a0, a1, a2, a3, a4) [follower's unit per power of the leader's], lowest power
    first, of a polynomial coupling function of degree ≤ 4: MuJoCo's joint-equality
    ``polycoef`` (f(x) = a0 + a1 x + … + a4 x⁴); None for a spline or a higher degree."""
    if fn[0] != "polynomial" or len(fn[1]) > 5:
        return None
    a = tuple(float(c) for c in reversed(fn[1]))
    return a + (0.0,) * (5 - len(a))


def evaluate(fn: tuple[Any, ...], a: float) -> tuple[float, float, float]:
    """(f(a), f'(a), f''(a)) of the coupling function ``fn`` at a [leader's unit]."""
    a = float(a)
    if fn[0] == "spline":
        return _spline(fn[1], fn[2], a)
    coef = fn[1]
    f = df = d2 = 0.0
    for c in coef:  # Horner for f and its two derivatives
        d2 = d2 * a + 2.0 * df
        df = df * a + f
        f = f * a + c
    return f, df, d2
