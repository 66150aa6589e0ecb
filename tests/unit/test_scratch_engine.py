"""An engine is one file and one table row: a scratch engine written to a temporary folder
and registered at run time goes through stages 0–2 and the replay stage by the public API
(harness.parity, harness.synth, harness.replay, harness.verify) with no other file of the
project touched, and leaves no trace in the registry afterwards.

The scratch engine is the Pinocchio adapter under another name (a subclass whose only
change is ``name``), so every row it takes part in must read as Pinocchio's: pairs with
the real engines pass, and a row Pinocchio does not provide, it does not provide either.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import harness
from harness.core.errors import BadInput
from harness.model import registry
from tests.conftest import ROOT

NAME = "scratch"
MODULE = "scratch_engine_adapter"  # the temporary module, on sys.path for this test only
REAL = ["pinocchio", "mujoco"]  # the real engines it is compared with
FIXTURE = "pendulum"


def _tree_state() -> str:
    """The project's files as git sees them (changes and untracked files included)."""
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                          cwd=ROOT, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """The scratch engine registered by one table row; unregistered (and its module
    forgotten) afterwards, whatever the test did. No file of the project changes."""
    before = _tree_state()
    folder = tmp_path / "adapters"
    folder.mkdir()
    (folder / f"{MODULE}.py").write_text(textwrap.dedent('''\
        """A scratch engine: the Pinocchio adapter under another name."""
        from engines.pinocchio import PinocchioAdapter


        class ScratchAdapter(PinocchioAdapter):
            name = "scratch"
        '''))
    monkeypatch.syspath_prepend(str(folder))
    assert NAME not in registry.ENGINES
    registry.register(NAME, registry.EngineEntry(MODULE, "ScratchAdapter", "pin", "pinocchio"))
    try:
        yield NAME
    finally:
        registry.unregister(NAME)
        sys.modules.pop(MODULE, None)
    assert NAME not in registry.ENGINES
    with pytest.raises(BadInput):
        registry.probe(NAME)
    assert _tree_state() == before, "registering an engine changed a file of the project"


def _by_id(records) -> dict:
    return {r.id: r for r in records}


def _assert_reads_as_pinocchio(records, stages):
    """Every row of ``stages`` that names the scratch engine passes when it compares with
    a real engine, and has the status of the same row with Pinocchio in its place when
    it is the scratch engine's alone."""
    rows = _by_id(records)
    mine = [r for r in records if r.stage in stages and NAME in r.id.split("/")[-1]]
    assert mine, f"no rows of {NAME} in stages {stages}"
    for r in mine:
        who = r.id.split("/")[-1]
        if "~" in who and "pinocchio" not in who.split("~") and "declared" not in who:
            assert r.status == "passed", (r.id, r.status, r.reason)
            continue
        twin = r.id[:-len(who)] + who.replace(NAME, "pinocchio")
        if twin in rows:
            assert r.status == rows[twin].status, (r.id, r.status, rows[twin].status)
        else:  # scratch~pinocchio: the same adapter twice
            assert r.status == "passed", (r.id, r.status, r.reason)
    for e in REAL:
        assert any(f"{NAME}~{e}" in r.id or f"{e}~{NAME}" in r.id for r in mine), e
    return mine


def test_scratch_engine_runs_stages_0_to_2_and_replay(scratch, tmp_path):
    engines = [scratch] + REAL
    assert scratch in registry.ENGINES
    assert registry.probe(scratch).available, registry.probe(scratch).reason

    out = harness.parity([FIXTURE], out=tmp_path / "parity", engines=engines, samples=3,
                         seed=1)
    assert out.verdict.exit_code == 0, out.verdict.headline
    mine = _assert_reads_as_pinocchio(out.records, {"model_identity", "kinematics",
                                                    "dynamics"})
    assert {r.stage for r in mine} == {"model_identity", "kinematics", "dynamics"}
    assert harness.verify(out.path) == []

    _, cand = harness.synth(FIXTURE, tmp_path / "cand" / "pendulum.json", duration=0.2)
    rep = harness.replay(cand, out=tmp_path / "replay", engines=engines, samples=3, seed=1)
    assert rep.verdict.exit_code == 0, rep.verdict.headline
    traj = [r for r in _assert_reads_as_pinocchio(rep.records, {"replay"})
            if r.quantity == "trajectory"]
    assert {r.id.split("/")[-1] for r in traj} >= {f"{scratch}~{e}" for e in REAL}
    assert harness.verify(rep.path) == []


def test_a_row_is_registered_once(scratch):
    entry = registry.EngineEntry(MODULE, "ScratchAdapter", "pin", "pinocchio")
    for name in (scratch, "pinocchio", "not a name"):
        with pytest.raises(BadInput):
            registry.register(name, entry)
    with pytest.raises(BadInput):
        registry.register("scratch2", ("not", "a", "row"))
    assert "scratch2" not in registry.ENGINES
