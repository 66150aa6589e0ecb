"""harness/stages/replay."""
