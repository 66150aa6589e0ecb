"""In-house fitter (issue 8): collocation, shooting, identifiability."""
