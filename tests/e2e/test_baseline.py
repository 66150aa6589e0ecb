"""`harness report NEW --baseline OLD`: what changed between two bundles, new failures
first — checked on a real regression (one engine given a corrupted model)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from harness import api
from harness.evidence import baseline
from harness.evidence import bundle as evidence
from harness.model.prepared import PreparedModel, prepare_fixture
from harness.stages import runner
from tests.conftest import ENGINES, run_cli


@dataclass(frozen=True)
class _HeavierForMujoco(PreparedModel):
    """chain7, except that MuJoCo (the only engine reading the MJCF) is given one link
    1 % heavier."""

    @cached_property
    def mjcf(self) -> str:
        text = super().mjcf
        assert text.count('mass="1.8"') == 1
        return text.replace('mass="1.8"', 'mass="1.818"')


def _bundle(tmp_path, name, model):
    res = runner.run([model], ENGINES, samples=3, seed=4)
    return evidence.write_bundle(tmp_path / name, res, {}, ["test"], api.evidence_hooks())


def test_regression_is_listed_first_and_fix_is_listed_as_fixed(tmp_path):
    good = prepare_fixture("chain7")
    old = _bundle(tmp_path, "old", good)
    new = _bundle(tmp_path, "new", _HeavierForMujoco(good.spec, "fixture:chain7 (edited)"))
    d = baseline.diff(api.read_bundle(new), api.read_bundle(old), str(old))
    assert d.regressions and all("mujoco" in c.id for c in d.regressions)
    assert {c.new for c in d.regressions} <= {"failed", "not_scored"}
    assert "chain7/model_identity/group_inertia/declared~mujoco" in {c.id for c in d.regressions}
    back = baseline.diff(api.read_bundle(old), api.read_bundle(new), str(new))
    assert not back.regressions
    fixed, regressed = {c.id for c in back.fixed}, {c.id for c in d.regressions}
    assert "chain7/model_identity/group_inertia/declared~mujoco" in fixed
    # every regression is fixed going back, or was a row that only the broken run has
    assert regressed == fixed | {c.id for c in back.removed if c.id in regressed}
    # CLI: the HTML shows the section before the summary; stdout names the regressions
    proc = run_cli("report", new, "--baseline", old, "--out", tmp_path / "r.html")
    assert proc.returncode == 0, proc.stderr
    assert "NEW FAILURE chain7/model_identity/group_inertia/declared~mujoco" in proc.stdout
    html = (tmp_path / "r.html").read_text()
    assert html.index('id="baseline"') < html.index('id="summary"')
    same = baseline.diff(api.read_bundle(old), api.read_bundle(old), str(old))
    assert not (same.regressions or same.fixed or same.grown or same.added or same.removed)
