"""The guard around an adapter's binding import, written once for every adapter.

An adapter module imports its binding (the engine's Python package) when it loads. A
binding that does not import must not make the adapter module unimportable: the registry
reports the engine as unavailable with the reason, and an adapter asked to build raises
``EngineUnavailable`` with the same reason. Engine-blind: the adapter names its engine.

    BINDING = Binding("<engine>")
    with BINDING:
        import <binding>
        <binding>.<setting>(...)          # settings taken once, only if it imported
    ...
    BINDING.require()   # in the adapter's __init__: EngineUnavailable if it failed

A failed import leaves the names of the ``with`` block unbound; code that reaches them
calls ``require()`` first.
"""
from __future__ import annotations

import ctypes
import logging
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

from harness.core.errors import EngineUnavailable


class Binding:
    """The outcome of one adapter module's binding import: ``error`` is the exception it
    raised (None when it imported)."""

    def __init__(self, engine: str) -> None:
        self.engine = engine
        self.error: Exception | None = None

    def __enter__(self) -> Binding:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> bool:
        if isinstance(error, Exception):  # not KeyboardInterrupt or SystemExit
            self.error = error
            return True  # the adapter module still imports; require() reports the reason
        return False

    @property
    def available(self) -> bool:
        return self.error is None

    def require(self) -> None:
        """EngineUnavailable(engine, the import error) when the binding did not import."""
        if self.error is not None:
            raise EngineUnavailable(self.engine, str(self.error))  # the reason as text


_LEVEL_TAG = re.compile(r"\[(\w+)\]\s*")  # "[warning] " of a native logger's line
# "Couldn't find file 'femur.vtp'.": a mesh that only draws the body (OpenSim's models
# name theirs; the harness never draws them), collapsed into one warning per block
_MISSING_MESH = re.compile(r"Couldn't find file '([^']+\.(?:vtp|obj|stl))'", re.IGNORECASE)


@contextmanager
def console_as_warnings(source: str) -> Iterator[None]:
    """What a binding's native code prints on stdout inside the block (OpenSim's console
    logger: "[warning] Body 'x' is massless …") becomes Python logging warnings of the
    logger ``source``, one per line: the command then shows each once with its count at
    the end, and ``--quiet`` only their number, instead of raw lines on the terminal.
    The output is held in an anonymous in-memory file; stdout is restored whatever
    happens."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    libc.fflush(None)
    saved = os.dup(1)
    held = os.memfd_create("harness-native-console", os.MFD_CLOEXEC)
    text = ""
    try:
        os.dup2(held, 1)
        try:
            yield
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.lseek(held, 0, os.SEEK_SET)
            chunks = []
            while chunk := os.read(held, 1 << 16):
                chunks.append(chunk)
            text = b"".join(chunks).decode("utf-8", "replace")
    finally:
        os.close(saved)
        os.close(held)
    log = logging.getLogger(source)
    meshes: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if (m := _MISSING_MESH.search(line)) is not None:
            meshes.append(m.group(1))
        elif line:
            log.warning(_LEVEL_TAG.sub("", line, count=1) if line.startswith("[") else line)
    if meshes:
        names = sorted(set(meshes))
        log.warning(f"{len(names)} display mesh file(s) not found ({', '.join(names[:3])}"
                    f"{', …' if len(names) > 3 else ''}): they only draw the bodies; the "
                    "harness does not use them")
