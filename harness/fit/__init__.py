"""In-house fitters: direct collocation (collocation.py), benchmark
problems (problems.py), the problems of `harness fit` (one module each, listed in
catalog.py) and their bundles (bundle.py), shooting with exact discrete gradients
(shooting.py, one RK4 step in rk4.py), identifiability (identifiability.py), and the
marker-trajectory fit by inverse-dynamics collocation on a B-spline (trajectory.py).
Engine-blind:
articulated models enter through an adapter's inverse dynamics and its derivatives."""

# the collocation schemes of collocation.py, here so that the CLI lists them without
# importing collocation (and scipy.sparse) on every command
METHODS = ("backward_euler", "midpoint", "trapezoidal", "hermite_simpson")
