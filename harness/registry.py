"""Which engines exist, whether they import here, and their versions.

An engine is *available* when its adapter module imports and its binding imports; the
registry never hides a failure: ``probe()`` returns the reason for every unavailable
engine, and asking for one raises EngineUnavailable (exit code 2 in the CLI).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from harness.errors import BadInput, EngineUnavailable

# engine name -> (adapter module, adapter class, PyPI distribution that carries it)
ENGINES = {
    "mujoco": ("engines.mujoco", "MujocoAdapter", "mujoco"),
    "pinocchio": ("engines.pinocchio", "PinocchioAdapter", "pin"),
    "crocoddyl": ("engines.crocoddyl", "CrocoddylAdapter", "crocoddyl"),
    "drake": ("engines.drake", "DrakeAdapter", "drake"),
}
# The binding each adapter needs (import name).
_BINDINGS = {"mujoco": "mujoco", "pinocchio": "pinocchio", "crocoddyl": "crocoddyl",
             "drake": "pydrake.multibody.plant"}


@dataclass(frozen=True)
class EngineInfo:
    name: str
    available: bool
    version: str
    reason: str = ""


_cache: dict = {}


def probe(name: str) -> EngineInfo:
    if name not in ENGINES:
        raise BadInput("--engines", f"unknown engine {name!r} (known: {', '.join(ENGINES)})")
    if name in _cache:
        return _cache[name]
    mod, _, dist = ENGINES[name]
    try:
        ver = version(dist)
    except PackageNotFoundError:
        ver = ""
    try:
        importlib.import_module(_BINDINGS[name])
        importlib.import_module(mod)
        info = EngineInfo(name, True, ver)
    except Exception as e:  # any import failure makes the engine unavailable, with why
        info = EngineInfo(name, False, ver, f"{type(e).__name__}: {e}")
    _cache[name] = info
    return info


def probe_all() -> list:
    return [probe(n) for n in ENGINES]


def adapter_class(name: str):
    info = probe(name)
    if not info.available:
        raise EngineUnavailable(name, info.reason)
    mod, cls, _ = ENGINES[name]
    return getattr(importlib.import_module(mod), cls)


def parse_engines(text: str | None) -> list:
    """'mujoco,drake' → ['mujoco', 'drake']; None or 'all' → every known engine."""
    if text is None or text.strip() == "all":
        return list(ENGINES)
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise BadInput("--engines", "no engine named")
    for n in names:
        probe(n)  # raises BadInput for unknown names
    if len(set(names)) != len(names):
        raise BadInput("--engines", "an engine is named twice")
    return names
