"""harness/model."""
