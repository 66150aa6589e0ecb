"""A stage is added in one place: a scratch stage registered by this test (its quantity,
tolerance row, recompute hook, report section and template, all declared here) is run,
written, shown in the report and recomputed by ``verify``, with no edit to report/,
evidence/ or api.py; and no module outside harness/stages/ compares a record's stage with
a stage's name written out.

The scratch stage compares the kinetic energy ½ vᵀ M(q) v [J] of the shared samples
between engines.
"""
from __future__ import annotations

import ast
import dataclasses
import re

import numpy as np
import pytest

import harness.api as api
from harness import stages
from harness.core import tolerances
from harness.core.records import Record
from harness.core.tolerances import Tolerance
from harness.stages import dynamics
from harness.stages.base import Quantity, Stage, state_labels
from tests.conftest import ROOT

NAME = "scratch_energy"
CALLS: list = []


def _kinetic_energy(adapter, inputs) -> np.ndarray:
    """(N,) ½ vᵀ M(q) v [J] of every sample."""
    return np.array([0.5 * v @ adapter.mass_matrix(q) @ v for q, v in zip(inputs.q, inputs.v)])


def _recompute(r: Record, arrays: dict, by_id: dict) -> Record:
    """Stage 2's recompute (a plain comparison for this quantity), counting its calls."""
    CALLS.append(r.id)
    return dynamics.recompute(r, arrays, by_id)


def _section(manifest, records, arrays, timings):
    rows = [r for r in records if r.stage == NAME]
    return {"n": len(rows), "worst": max((r.max_rel or 0.0) for r in rows)} if rows else None


@pytest.fixture
def scratch_stage(tmp_path, monkeypatch):
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "scratch_section.html.j2").write_text(
        '<section id="scratch_energy"><h2>Scratch energy</h2>'
        '<p id="scratch-count">{{ section.n }} kinetic-energy rows, worst relative error '
        '{{ section.worst | sci }}</p></section>\n')
    # the scratch stage's own table row: ½ vᵀ M v carries the mass matrix's round-off, so
    # it takes stage 2's mass-matrix entry
    monkeypatch.setitem(tolerances.TABLE, (NAME, "kinetic_energy"),
                        tolerances.lookup("dynamics", "mass_matrix"))
    stage = Stage(NAME, 7, (Quantity("kinetic_energy", _kinetic_energy, state_labels,
                                     needs="mass_matrix"),),
                  recompute=_recompute, report_section=_section,
                  template="scratch_section.html.j2", template_dir=folder,
                  title="Scratch energy")
    stages.register(stage)
    CALLS.clear()
    yield stage
    stages.unregister(NAME)


def test_scratch_stage_runs_reports_and_verifies(scratch_stage, tmp_path):
    out = tmp_path / "bundle"
    o = api.parity(["double_pendulum"], out=out, stages=["kinematics", NAME],
                   engines="mujoco,pinocchio,drake", samples=4)
    rows = [r for r in o.records if r.stage == NAME]
    assert len(rows) == 3 and all(r.status == "passed" for r in rows), \
        [(r.id, r.status, r.reason) for r in rows]
    assert o.exit_code == 0
    html = (out / "index.html").read_text()
    assert '<section id="scratch_energy">' in html and "Stage: scratch_energy" in html
    assert '<a href="#scratch_energy">Scratch energy</a>' in html  # its contents entry
    assert "3 kinetic-energy rows" in html
    assert api.verify(out) == []
    assert sorted(CALLS) == sorted(r.id for r in rows)  # verify used the stage's hook

    # the hook is what verify trusts: a hook that recomputes another number is caught
    def lying(r, arrays, by_id):
        return dataclasses.replace(_recompute(r, arrays, by_id), max_abs=1.0)

    stages.unregister(NAME)
    stages.register(dataclasses.replace(scratch_stage, recompute=lying))
    problems = api.verify(out)
    assert len(problems) == 3 and all("recomputed max_abs" in p for p in problems), problems


def test_scratch_stage_fails_a_disagreement(scratch_stage, tmp_path, monkeypatch):
    """The stage's rows are real comparisons: a tolerance below the engines' round-off
    fails them, and the verdict and exit code follow."""
    monkeypatch.setitem(tolerances.TABLE, (NAME, "kinetic_energy"),
                        Tolerance(0.0, 0.0, "test: no round-off allowed"))
    o = api.parity(["double_pendulum"], out=tmp_path / "b", stages=[NAME],
                   engines="mujoco,pinocchio,drake", samples=4)
    rows = [r for r in o.records if r.stage == NAME]
    assert rows and any(r.status == "failed" for r in rows)
    assert o.exit_code == 1


def test_unregister_restores_the_list(scratch_stage):
    assert NAME in stages.BY_NAME and stages.STAGES[-1] is scratch_stage
    with pytest.raises(ValueError):
        stages.register(scratch_stage)
    with pytest.raises(ValueError):
        stages.unregister(stages.STAGES[0].name)  # a built-in stage stays


# ----- no stage names written out where the stages are not declared ----------------------
STAGE_NAMES = {s.name for s in stages.STAGES}
# the modules that must not know any stage: they receive what they show through hooks
AGNOSTIC = ["harness/report/render.py", "harness/evidence/bundle.py",
            "harness/evidence/junit.py", "harness/evidence/baseline.py"]


def _stage_like(node) -> bool:
    """An expression that reads a stage's name: ``x.stage``, ``stage``, ``stage_list``…"""
    if isinstance(node, ast.Attribute):
        return "stage" in node.attr
    return isinstance(node, ast.Name) and "stage" in node.id


def _stage_name_uses(path, rel: str | None = None) -> list:
    """(line, text) of every string literal naming a stage in ``path`` (read as the module
    ``rel``, its path in the repository): compared with or tested for membership in a stage
    expression, or anywhere in a stage-agnostic module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    rel = rel or str(path.relative_to(ROOT))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            consts = [c for s in sides for c in ast.walk(s)
                      if isinstance(c, ast.Constant) and c.value in STAGE_NAMES]
            if consts and any(_stage_like(s) for s in sides):
                out.append((node.lineno, consts[0].value))
        elif rel in AGNOSTIC and isinstance(node, ast.Constant) and node.value in STAGE_NAMES:
            out.append((node.lineno, node.value))
    return out


def test_no_stage_name_outside_stages():
    found = []
    for path in sorted((ROOT / "harness").rglob("*.py")):
        if (ROOT / "harness" / "stages") in path.parents:
            continue
        found += [f"{path.relative_to(ROOT)}:{line}: {text!r}"
                  for line, text in _stage_name_uses(path)]
    assert not found, "stage names written out:\n" + "\n".join(found)


def test_no_stage_name_in_the_report_template():
    """The page template loops over the stages' sections; it compares no stage name."""
    text = (ROOT / "harness/report/templates/report.html.j2").read_text()
    tags = re.findall(r"{[{%].*?[}%]}", text, flags=re.S)
    hits = [t for t in tags for n in STAGE_NAMES if f'"{n}"' in t or f"'{n}'" in t]
    assert not hits, hits


def test_the_stage_name_check_can_fail(tmp_path):
    """A planted ``r.stage == "replay"`` anywhere, and a bare stage name in the evidence
    layer, are found."""
    planted = tmp_path / "planted.py"
    planted.write_text('def f(r):\n    return r.stage == "replay"\n')
    assert _stage_name_uses(planted, "harness/swing/planted.py") == [(2, "replay")]
    planted.write_text('X = "constrained"\n')
    assert _stage_name_uses(planted, "harness/swing/planted.py") == []
    assert _stage_name_uses(planted, "harness/evidence/junit.py") == [(1, "constrained")]
