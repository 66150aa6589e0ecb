"""harness/stages/diagnosis."""
