"""What the `.osim` import's notes say about OpenSim's coordinates, read back for
`harness track` and its scaling: each coordinate's default value and the factor between
the canonical coordinate and OpenSim's.

Units: rad | m for default values; the factor is dimensionless.
"""
from __future__ import annotations

import re
from collections.abc import Sequence


def _noted(notes: Sequence[str], pattern: str) -> dict[str, float]:
    """{coordinate: the number} of every note matching ``pattern`` (two groups: the
    coordinate, then the number)."""
    out = {}
    for n in notes:
        m = re.match(pattern, n)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def defaults(notes: Sequence[str]) -> dict[str, float]:
    """{coordinate: OpenSim's default value [rad | m]} where the import noted one ≠ 0."""
    return _noted(notes, r"coordinate (\S+): default_value (\S+) is OpenSim's initial pose")


def scales(notes: Sequence[str]) -> dict[str, float]:
    """{coordinate: |s|} where the canonical coordinate is |s| × OpenSim's (import notes)."""
    return _noted(notes, r"coordinate (\S+): the canonical coordinate is (\S+) ×")
