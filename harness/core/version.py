"""The harness version (one place; the package metadata carries the same)."""
__version__ = "0.1.0"
