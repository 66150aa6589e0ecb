"""harness/report."""
