"""Multi-engine parity and replay evaluation harness for rigid-body dynamics.

``import harness`` gives the public API of harness/api.py — ``parity``, ``qualify``,
``replay``, ``diagnose``, ``fit``, ``swing``, ``verify``, ``report`` and friends — loaded on
first use, so that importing the package stays cheap (the engines load only when a run
needs them). See docs/api.md.
"""
from __future__ import annotations

import sys
import types
from typing import Any

from harness.core.version import __version__

_API = ("parity", "qualify", "replay", "diagnose", "fit", "swing", "verify", "report",
        "synth", "capture", "sweep", "engines", "read_bundle", "run", "load_models",
        "make_candidate", "save_candidate", "Outcome")


class _Package(types.ModuleType):
    """The package's module type: an API name is always the api's function, also when a
    subpackage of the same name (``harness.report``) has been imported, which binds the
    subpackage as an attribute of the package (imports of the subpackage go through
    sys.modules and are unaffected)."""

    def __getattribute__(self, name: str) -> Any:
        if name in _API:
            # the API loads on first use, so that `import harness` stays light
            from harness import api

            return getattr(api, name)
        return super().__getattribute__(name)


sys.modules[__name__].__class__ = _Package


def __dir__() -> list:
    return sorted([*globals(), *_API])


__all__ = ["__version__", *_API]
