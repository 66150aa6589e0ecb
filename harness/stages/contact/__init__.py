"""harness/stages/contact."""
