"""harness/sweep."""
