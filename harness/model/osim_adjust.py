"""An OpenSim model file (.osim) with its bodies' mass properties adjusted, written as an
edited copy of the file's own text: every body's mass and inertia times one scale, one
body's mass centre moved (what `harness track`'s residual reduction changes, as RRA's
adjusted model does).

Units: kg (``<mass>``), kg·m² (``<inertia>``, or OpenSim 3's ``<inertia_xx>`` …
``<inertia_yz>``: about the mass centre, body axes), m (``<mass_center>``, in the body's
frame). Numbers are written with ``repr`` (the shortest text that reads back to the same
double), so OpenSim reads exactly the values computed here.

Everything else is kept byte for byte: only the text of the elements whose value changes
is replaced (a body of zero mass keeps its ``0``), comments are skipped, and a
``file="…"`` reference relative to the input's folder is made absolute (the copy is
written elsewhere; each such change is returned as a note).
"""
from __future__ import annotations

import os
import re
from collections.abc import Sequence

_COMMENT = re.compile(rb"<!--.*?-->", re.S)
_BODY = re.compile(rb"<Body\s+name\s*=\s*\"([^\"]*)\"[^>]*?(?<!/)>(.*?)</Body\s*>", re.S)
_MASS = re.compile(rb"(<mass\s*>)([^<]*)(</mass\s*>)")
_INERTIA = re.compile(rb"(<(inertia(?:_[xyz]{2})?)\s*>)([^<]*)(</\2\s*>)")
_COM = re.compile(rb"(<mass_center\s*>)([^<]*)(</mass_center\s*>)")
_FILE = re.compile(rb"""(<[A-Za-z_][\w.-]*[^>]*?\sfile\s*=\s*)(?:"([^"]*)"|'([^']*)')""")


def _scaled(text: bytes, s: float) -> bytes | None:
    """The numbers of an element's text times s (a number that does not change keeps its
    text: a zero stays ``0``); None when none changes."""
    words = text.split()
    new = [float(x) * s for x in words]
    if all(x == float(w) for x, w in zip(new, words)):
        return None
    return b" ".join(w if x == float(w) else repr(x).encode() for x, w in zip(new, words))


def _masked(text: bytes) -> bytes:
    """``text`` with every comment blanked (same length: positions are the text's)."""
    return _COMMENT.sub(lambda m: b" " * len(m.group(0)), text)


def _body_edits(plain: bytes, a: int, b: int, s: float, com: Sequence[float] | None
                ) -> list[tuple[int, int, bytes]]:
    """(start, end, new text) of one ``<Body>``'s content plain[a:b] (comments blanked):
    its mass and inertia times s and, when given, its mass centre at com (3,) m;
    ValueError when it has no single ``<mass_center>`` to move."""
    edits = []
    for m in _MASS.finditer(plain, a, b):
        edits.append((m.start(2), m.end(2), _scaled(m.group(2), s)))
    for m in _INERTIA.finditer(plain, a, b):
        edits.append((m.start(3), m.end(3), _scaled(m.group(3), s)))
    if com is not None:
        found = list(_COM.finditer(plain, a, b))
        if len(found) != 1:
            raise ValueError(f"{len(found)} <mass_center> elements where one is moved")
        m = found[0]
        same = [float(x) for x in m.group(2).split()] == [float(x) for x in com]
        edits.append((m.start(2), m.end(2),
                      None if same else " ".join(repr(float(x)) for x in com).encode()))
    return [(i, j, new) for i, j, new in edits if new is not None]


def adjusted_osim(text: bytes, source_dir: str, mass_scale: float, com_body: str,
                  com: Sequence[float]) -> tuple[bytes, list[str]]:
    """(the .osim's bytes, notes): ``text`` (the .osim's bytes, read from ``source_dir``)
    with every ``<Body>``'s mass and inertia times ``mass_scale`` and ``com_body``'s mass
    centre at ``com`` (3,) m in its frame. ValueError when ``com_body`` is not one
    ``<Body>`` of the file."""
    plain = _masked(text)
    bodies = list(_BODY.finditer(plain))
    if sum(m.group(1).decode("utf-8", "replace") == com_body for m in bodies) != 1:
        raise ValueError(f"no single <Body name=\"{com_body}\"> in the model file")
    edits = []
    for m in bodies:
        here = m.group(1).decode("utf-8", "replace") == com_body
        edits += _body_edits(plain, m.start(2), m.end(2), mass_scale, com if here else None)
    notes: list[str] = []
    for m in _FILE.finditer(plain):
        raw = m.group(2) if m.group(2) is not None else m.group(3) or b""
        ref = raw.decode("utf-8", "replace").strip()
        if ref and not os.path.isabs(ref):
            target = os.path.abspath(os.path.join(source_dir, ref))
            notes.append(f"file={ref!r} made absolute: {target}")
            edits.append((m.end(1), m.end(), b'"' + target.encode() + b'"'))
    out = text
    for i, j, new in sorted(edits, reverse=True):
        out = out[:i] + new + out[j:]
    return out, notes
