"""Multi-engine parity and replay evaluation harness for rigid-body dynamics.

``import harness`` gives the public API of harness/api.py — ``parity``, ``qualify``,
``replay``, ``diagnose``, ``fit``, ``swing``, ``verify``, ``report`` and friends — loaded on
first use, so that importing the package stays cheap (the engines load only when a run
needs them). See docs/api.md.
"""
from __future__ import annotations

from harness.core.version import __version__

_API = ("parity", "qualify", "replay", "diagnose", "fit", "swing", "verify", "report",
        "synth", "capture", "sweep", "engines", "read_bundle", "run", "load_models",
        "make_candidate", "save_candidate", "Outcome")


def __getattr__(name: str):
    if name in _API:
        from harness import api

        return getattr(api, name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")


def __dir__() -> list:
    return sorted([*globals(), *_API])


__all__ = ["__version__", *_API]
