"""In-house fitters: direct collocation (collocation.py), benchmark
problems (problems.py), fit bundles and reports (bundle.py), shooting with exact discrete
gradients (shooting.py), identifiability (identifiability.py), and the marker-trajectory
fit by inverse-dynamics collocation on a B-spline (trajectory.py). Engine-blind:
articulated models enter through an adapter's inverse dynamics and its derivatives."""
