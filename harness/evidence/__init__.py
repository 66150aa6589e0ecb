"""harness/evidence."""
