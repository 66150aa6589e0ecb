"""``compare_each`` (verify's batched recomputation of plain comparison rows) gives the
records of ``compare`` row by row, bit for bit, on arrays of every kind a bundle may hold:
equal, differing, exact zeros on one side or both, non-finite values, mixed shapes (small
ones measured stacked, large ones a row at a time), and rows ``compare`` refuses; the
arrays it is given are left as they were."""
from __future__ import annotations

import numpy as np

from harness.core.records import _ROW_AT_A_TIME, compare, compare_each
from harness.core.tolerances import Tolerance


def _rows(rng: np.random.Generator) -> list[tuple]:
    rows = []
    for i in range(300):
        shape = [(4, 3), (4, 3), (2,), (5, 2, 2), (1, 1), (6, 50, 60), (3, 20000)][i % 7]
        a = np.asarray(rng.normal(size=shape) * 10.0 ** rng.integers(-3, 4), dtype=float)
        kind = i % 9
        b = a + rng.normal(size=shape) * 10.0 ** -rng.integers(6, 16)
        if kind == 1:
            b = a.copy()
        elif kind == 2:
            a = np.array(a)
            a[0] = 0.0  # a sample of exact zeros on one side: against zero
        elif kind == 3:
            a, b = np.zeros(shape), np.zeros(shape)
        elif kind == 4:
            b.flat[-1] = np.nan
        elif kind == 5:
            a.flat[0] = np.inf
        elif kind == 6:
            b = a * (1 + 1e-3)  # fails: the reason names its worst sample
        labels = [f"state {k}" for k in range(shape[0])] if i % 2 else None
        tol = Tolerance([0.0, 1e-12, 1e-9][i % 3], [1e-9, 0.0, 1e-12][i % 3], "")
        rows.append((f"r{i}", "model_identity", "fx", "body_inertia", "mujoco", "drake",
                     a, b, tol, f"a{i}", f"b{i}", labels, "lab" if labels else ""))
    tol = Tolerance(1e-9, 1e-9, "")
    rows.append(("bad-shape", "kinematics", "fx", "frame_pose", "a", "b", np.zeros((3, 2)),
                 np.zeros((2, 2)), tol, "a", "b"))
    rows.append(("no-samples", "kinematics", "fx", "frame_pose", "a", "b", np.zeros((0, 2)),
                 np.zeros((0, 2)), tol, "a", "b"))
    rows.append(("text", "kinematics", "fx", "frame_pose", "a", "b", np.array(["x"]),
                 np.array(["y"]), tol, "a", "b"))
    return rows


def test_compare_each_is_compare_row_by_row():
    rows = _rows(np.random.default_rng(7))
    sizes = {np.asarray(r[6]).size >= _ROW_AT_A_TIME for r in rows}
    assert sizes == {True, False}  # both ways of measuring
    before = [(np.array(r[6]), np.array(r[7])) for r in rows]
    got = compare_each(rows)
    for (a, b), row in zip(before, rows):  # the bundle's arrays are only read
        assert a.tobytes() == np.asarray(row[6]).tobytes()
        assert b.tobytes() == np.asarray(row[7]).tobytes()
    assert len(got) == len(rows)
    kinds = set()
    for row, g in zip(rows, got):
        try:
            want = compare(*row)
        except (ValueError, IndexError, TypeError) as e:
            assert type(g) is type(e) and str(g) == str(e), row[0]
            kinds.add("raised")
            continue
        assert not isinstance(g, Exception), (row[0], g)
        assert g.to_json() == want.to_json(), row[0]
        # bit for bit, NaN and inf included
        for f in ("max_abs", "max_rel"):
            x, y = getattr(g, f), getattr(want, f)
            assert (x is None and y is None) or np.float64(x).tobytes() == \
                np.float64(y).tobytes(), (row[0], f)
        kinds.add(g.status if g.max_rel is not None or g.max_abs is None else "against zero")
    assert {"passed", "failed", "against zero", "raised"} <= kinds
