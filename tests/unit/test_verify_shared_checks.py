"""``verify`` checks a derived array that many rows share (stage 2's cond(M) of a
fixture's stored mass matrices) once per pass, and still names every row that uses it: a
forged cond(M) array, with the archive's hash forged too, is a problem of each of the
fixture's forward-dynamics rows, as it was when each row checked it on its own. The rows
stage 2's hook computes as ``compare`` alone are measured with the plain rows, and judged
as the hook judges them."""
from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np

from harness import api
from harness.evidence import bundle as evidence
from tests.conftest import reseal_arrays


def test_a_forged_cond_array_is_a_problem_of_every_row_that_uses_it(tmp_path):
    out = tmp_path / "b"
    o = api.parity(fixtures=["chain7"], out=out, samples=3,
                   engines="mujoco,pinocchio,drake")
    assert api.verify(out) == []
    ck = "cond/chain7/mass_matrix"
    users = [r.id for r in o.records if r.quantity == "forward_dynamics"
             and r.status == "passed" and r.engine_a != "declared"]
    assert len(users) >= 3  # every engine pair
    arrays = dict(o.arrays)
    arrays[ck] = arrays[ck] * 1.01
    reseal_arrays(out, arrays)
    problems = api.verify(out)
    for rid in users:
        assert any(p.startswith(f"record {rid}: cannot recompute") and ck in p
                   for p in problems), rid
    # the same, twice in one process: nothing of the first pass is kept for the second
    assert api.verify(out) == problems
    arrays[ck] = o.arrays[ck]
    reseal_arrays(out, arrays)
    assert not any("cannot recompute" in p for p in api.verify(out))


def test_stage_2_rows_verify_measures_with_the_plain_rows_are_judged_as_its_hook_judges_them(
        tmp_path):
    """The rows stage 2's hook computes as ``compare`` alone (``compared_plainly``) are
    measured with the plain rows, stacked: on a bundle whose plain stage-2 rows were
    tampered with (an array scaled, a NaN, a record's numbers, status and tolerance
    edited), ``verify`` names the same problems, word for word, as when the hook
    recomputes every stage-2 row itself. The conditioned rows (v̇) are never taken for
    plain ones."""
    out = tmp_path / "b"
    o = api.parity(fixtures=["chain7"], out=out, samples=3,
                   engines="mujoco,pinocchio,drake")
    b = api.read_bundle(out)
    hooks = api.evidence_hooks()
    plainly = hooks.compared_plainly["dynamics"]
    rows = [r for r in b.records if r.stage == "dynamics" and r.status == "passed"]
    plain = [r for r in rows if plainly(r, b.arrays)]
    other = [r for r in rows if not plainly(r, b.arrays)]
    assert plain and other
    # v̇ is scored against cond(M): never a plain row
    assert {r.quantity for r in other} >= {"forward_dynamics"}
    assert "forward_dynamics" not in {r.quantity for r in plain}
    arrays = {k: np.array(v, copy=True) for k, v in b.arrays.items()}
    arrays[plain[0].key_a] = arrays[plain[0].key_a] * (1 + 1e-6)
    arrays[plain[1].key_b] = np.where(np.arange(arrays[plain[1].key_b].size).reshape(
        arrays[plain[1].key_b].shape) == 1, np.nan, arrays[plain[1].key_b])
    recs = [copy.copy(r) for r in o.records]
    edited = {plain[2].id: {"max_abs": 1.0}, plain[3].id: {"status": "failed", "passed": False},
              plain[4].id: {"rtol": 0.5}}
    for r in recs:
        for k, v in edited.get(r.id, {}).items():
            setattr(r, k, v)
    tampered = evidence.Bundle(b.path, b.manifest, recs, arrays)
    stacked = evidence.verify_read(tampered, hooks)
    by_hook = evidence.verify_read(tampered, replace(hooks, compared_plainly={}))
    assert len(stacked) >= 5
    assert stacked == by_hook
