"""Which engines exist, whether they import here, and their versions.

An engine is *available* when its adapter module imports and its binding imports; the
registry never hides a failure: ``probe()`` returns the reason for every unavailable
engine, and asking for one raises EngineUnavailable (exit code 2 in the CLI).

The engines are the rows of the table ``ENGINES`` in engines/__init__.py, read live: a
row added at run time (``register``, or put in the table directly) is an engine like the
others from then on, and ``registry.ENGINES`` (the names, in table order) includes it.
This module is the only one that imports by name (``importlib``).
"""
from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from harness.core.errors import BadInput, EngineUnavailable

# The engines package's table (engines/__init__.py): read by name, never imported
# statically, so that nothing above the registry depends on an engine module.
_ENGINES_PACKAGE = importlib.import_module("engines")


class _Row(Protocol):
    """What the registry reads of a table row (engines/__init__.py EngineEntry)."""

    module: str
    cls: str
    distribution: str
    binding: str
    preferred_for: tuple[str, ...]
    default: bool


_TABLE: dict[str, _Row] = _ENGINES_PACKAGE.ENGINES
EngineEntry = _ENGINES_PACKAGE.EngineEntry  # a table row: adapter module and class, ...
_cache: dict[str, EngineInfo] = {}  # name -> EngineInfo, filled by probe()


def engine_names() -> tuple[str, ...]:
    """The engines' names, in the table's order (rows added at run time included)."""
    return tuple(_TABLE)


def default_names() -> tuple[str, ...]:
    """The engines a command runs when none are named: every row but the opt-in ones
    (``default=False``, e.g. the float32 engine), in the table's order."""
    return tuple(n for n, row in _TABLE.items() if getattr(row, "default", True))


def __getattr__(attr: str) -> tuple[str, ...]:
    # ``registry.ENGINES``: the default engines of the table as it is now (not a copy taken
    # at import); ``engine_names()`` is every row, the opt-in ones included
    if attr == "ENGINES":
        return default_names()
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


def register(name: str, entry: object) -> None:
    """Add the engine ``name`` as one table row (an ``EngineEntry``: adapter module and
    class, distribution, binding); BadInput if the name is taken or not a plain name.
    Probed, like every engine, when first asked for. The row lives in this process: the
    worker processes of a batch or a sweep read the table of engines/__init__.py."""
    if not isinstance(entry, EngineEntry):
        raise BadInput(name, "an engine is registered with an EngineEntry "
                             "(engines/__init__.py)")
    if not name.isidentifier() or name in _TABLE:
        raise BadInput(name, "engine names are plain names, each registered once "
                             f"(known: {', '.join(_TABLE)})")
    _cache.pop(name, None)
    _TABLE[name] = entry


def unregister(name: str) -> None:
    """Remove the row ``register`` added (and what was probed of it)."""
    del _TABLE[name]
    _cache.pop(name, None)


def named_module(name: str) -> ModuleType:
    """The module whose name is data (an engine's adapter or binding, a sweep named on the
    command line, the scoring module a sweep.json names, a fit problem's module that
    harness/fit/catalog.py declares), imported by name: the one place
    that does so, so that what the harness can import is visible here."""
    return importlib.import_module(name)


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


def probe(name: str, option: str = "--engines") -> EngineInfo:
    """Whether engine ``name`` is available here (cached); BadInput naming ``option`` (the
    option or file that named the engine) for an unknown name."""
    if name not in _TABLE:
        raise BadInput(option, f"unknown engine {name!r} (known: {', '.join(_TABLE)})")
    if name in _cache:
        return _cache[name]
    entry = _TABLE[name]
    # importlib.metadata costs every command about 20 ms to import: here only when probed
    from importlib.metadata import PackageNotFoundError, version
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


def probe_all() -> list[EngineInfo]:
    return [probe(n) for n in engine_names()]


# Any: a class read by name from the table; callers use capabilities (compile_mjcf,
# osim_to_spec, …) beyond EngineAdapter, each checked with registry.providing first
def adapter_class(name: str) -> Any:
    info = probe(name)
    if not info.available:
        raise EngineUnavailable(name, info.reason)
    entry = _TABLE[name]
    return getattr(importlib.import_module(entry.module), entry.cls)


def parse_engines(text: str | None, option: str = "--engines") -> list[str]:
    """'mujoco,drake' → ['mujoco', 'drake']; None → the default engines (every row but the
    opt-in ones); 'all' → every known engine, the opt-in ones included. Errors name
    ``option``, the option the list came from (``--engines``, ``--allow-missing``)."""
    if text is None:
        return list(default_names())
    if text.strip() == "all":
        return list(engine_names())
    chosen = [t.strip() for t in text.split(",") if t.strip()]
    if not chosen:
        raise BadInput(option, "no engine named")
    for n in chosen:
        probe(n, option)  # raises BadInput for unknown names
    if len(set(chosen)) != len(chosen):
        raise BadInput(option, "an engine is named twice")
    return chosen


def preferred(role: str) -> str:
    """The first available engine the engines table prefers for ``role`` (e.g. "fit"),
    else the first available engine; EngineUnavailable if none is available."""
    ranked = [n for n in _TABLE if role in _TABLE[n].preferred_for] + list(_TABLE)
    for n in ranked:
        if probe(n).available:
            return n
    raise EngineUnavailable(role, "no engine is available")


def for_role(role: str) -> list[str]:
    """The engines the engines table names for ``role``, available here or not (``probe``
    says which and why), in table order."""
    return [n for n in _TABLE if role in _TABLE[n].preferred_for]


def distributions() -> dict[str, str]:
    """{engine: PyPI distribution that carries it}."""
    return {n: _TABLE[n].distribution for n in engine_names()}


def modules(names: Iterable[str] | None = None) -> list[str]:
    """The import names of each engine's binding and adapter module (``names`` None: every
    engine), without importing them: what a process that will run those engines may import
    ahead of time."""
    out: list[str] = []
    for n in (_TABLE if names is None else names):
        out += [_TABLE[n].binding, _TABLE[n].module]
    return out


def providing(capability: str | type) -> list[str]:
    """Engines (available here) whose adapter class has ``capability``: a capability
    protocol of harness/model/protocol.py (``HasX``: every method it names) or the name of
    one method; BadInput naming the method(s) if no engine has it."""
    if isinstance(capability, str):
        what = capability

        def has(cls: type) -> bool:
            return callable(getattr(cls, capability, None))
    else:
        what = ", ".join(k for k, v in vars(capability).items() if not k.startswith("_")
                         and (callable(v) or isinstance(v, staticmethod)))

        def has(cls: type) -> bool:
            return issubclass(cls, capability)
    out = [n for n in engine_names() if probe(n).available and has(adapter_class(n))]
    if not out:
        raise BadInput(what, "no available engine provides it")
    return out
