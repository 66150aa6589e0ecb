"""Which engines exist, whether they import here, and their versions.

An engine is *available* when its adapter module imports and its binding imports; the
registry never hides a failure: ``probe()`` returns the reason for every unavailable
engine, and asking for one raises EngineUnavailable (exit code 2 in the CLI).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from harness.core.errors import BadInput, EngineUnavailable

# The engines package's table (engines/__init__.py): read by name, never imported
# statically, so that nothing above the registry depends on an engine module.
_ENGINES_PACKAGE = importlib.import_module("engines")
_TABLE = _ENGINES_PACKAGE.ENGINES
ENGINES = tuple(_TABLE)


def command_process() -> None:
    """Process-wide engine settings for a harness command or worker, before any binding is
    imported (engines/__init__.py ``command_process``)."""
    _ENGINES_PACKAGE.command_process()


@dataclass(frozen=True)
class EngineInfo:
    name: str
    available: bool
    version: str
    reason: str = ""


_cache: dict = {}


def probe(name: str, option: str = "--engines") -> EngineInfo:
    """Whether engine ``name`` is available here (cached); BadInput naming ``option`` (the
    option or file that named the engine) for an unknown name."""
    if name not in ENGINES:
        raise BadInput(option, f"unknown engine {name!r} (known: {', '.join(ENGINES)})")
    if name in _cache:
        return _cache[name]
    entry = _TABLE[name]
    try:
        ver = version(entry.distribution)
    except PackageNotFoundError:
        ver = ""
    try:
        importlib.import_module(entry.binding)
        importlib.import_module(entry.module)
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
    entry = _TABLE[name]
    return getattr(importlib.import_module(entry.module), entry.cls)


def parse_engines(text: str | None, option: str = "--engines") -> list:
    """'mujoco,drake' → ['mujoco', 'drake']; None or 'all' → every known engine. Errors
    name ``option``, the option the list came from (``--engines``, ``--allow-missing``)."""
    if text is None or text.strip() == "all":
        return list(ENGINES)
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise BadInput(option, "no engine named")
    for n in names:
        probe(n, option)  # raises BadInput for unknown names
    if len(set(names)) != len(names):
        raise BadInput(option, "an engine is named twice")
    return names


def preferred(role: str) -> str:
    """The first available engine the engines table prefers for ``role`` (e.g. "fit"),
    else the first available engine; EngineUnavailable if none is available."""
    ranked = [n for n in ENGINES if role in _TABLE[n].preferred_for] + list(ENGINES)
    for n in ranked:
        if probe(n).available:
            return n
    raise EngineUnavailable(role, "no engine is available")


def distributions() -> dict:
    """{engine: PyPI distribution that carries it}."""
    return {n: _TABLE[n].distribution for n in ENGINES}


def modules(names=None) -> list:
    """The import names of each engine's binding and adapter module (``names`` None: every
    engine), without importing them: what a process that will run those engines may import
    ahead of time."""
    out = []
    for n in (ENGINES if names is None else names):
        out += [_TABLE[n].binding, _TABLE[n].module]
    return out


def providing(method: str) -> list:
    """Engines (available here) whose adapter class defines ``method``; BadInput if none."""
    out = [n for n in ENGINES if probe(n).available
           and callable(getattr(adapter_class(n), method, None))]
    if not out:
        raise BadInput(method, "no available engine provides it")
    return out
