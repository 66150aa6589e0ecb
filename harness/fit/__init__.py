"""In-house fitter: direct collocation (collocation.py), benchmark problems (problems.py),
fit bundles and reports (bundle.py). Engine-blind: articulated models enter through an
adapter's ``inverse_dynamics`` (collocation.ArticulatedDynamics)."""
