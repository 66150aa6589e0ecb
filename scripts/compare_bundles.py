"""Compare two evidence bundles' records.json and arrays.npz: identical except the fields
that name the build (harness version, git commit) — used to show that a refactoring left
`harness qualify` unchanged.

    python scripts/compare_bundles.py OLD_BUNDLE NEW_BUNDLE

Prints one line per difference and exits 1 if there is any; 0 and "identical" otherwise.
records.json must be byte-identical; arrays.npz must hold the same names, dtypes, shapes
and bytes for every array (the archive itself is written deterministically, so its bytes
are compared too).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

# arrays and record fields that name the build, not the computation
BUILD_FIELDS = ("harness_version", "git_commit")


def compare(old: Path, new: Path) -> list:
    out = []
    ro, rn = (old / "records.json").read_bytes(), (new / "records.json").read_bytes()
    if ro != rn:
        out.append("records.json differs")
    with np.load(old / "arrays.npz", allow_pickle=False) as zo, \
            np.load(new / "arrays.npz", allow_pickle=False) as zn:
        so, sn = set(zo.files), set(zn.files)
        for k in sorted(so - sn):
            out.append(f"array {k}: only in {old}")
        for k in sorted(sn - so):
            out.append(f"array {k}: only in {new}")
        for k in sorted(so & sn):
            a, b = zo[k], zn[k]
            if a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
                out.append(f"array {k}: differs")
    if (old / "arrays.npz").read_bytes() != (new / "arrays.npz").read_bytes() and not out:
        out.append("arrays.npz: same arrays, different archive bytes")
    return out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        sys.stderr.write("usage: compare_bundles.py OLD_BUNDLE NEW_BUNDLE\n")
        return 2
    problems = compare(Path(argv[0]), Path(argv[1]))
    for p in problems:
        print(p)
    print("identical" if not problems else f"{len(problems)} difference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
