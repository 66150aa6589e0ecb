"""harness/stages/constrained."""
