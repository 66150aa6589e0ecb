"""harness/capture."""
