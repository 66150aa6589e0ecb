"""``verify`` checks a derived array that many rows share (stage 2's cond(M) of a
fixture's stored mass matrices) once per pass, and still names every row that uses it: a
forged cond(M) array, with the archive's hash forged too, is a problem of each of the
fixture's forward-dynamics rows, as it was when each row checked it on its own."""
from __future__ import annotations

from harness import api
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
