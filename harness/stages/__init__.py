"""The staged comparison: every stage declared once, as a ``Stage`` (harness/stages/base.py).

| # | stage           | quantities                                                   |
|---|-----------------|--------------------------------------------------------------|
| 0 | model_identity  | total_mass, group_inertia (per joint), mass_matrix_neutral   |
| 1 | kinematics      | frame_pose, frame_jacobian (every body and named frame)      |
| 2 | dynamics        | mass_matrix, bias_forces, forward_dynamics, inverse_dynamics |
| 3 | constrained     | KKT v̇ and λ of holonomic loops, J, J̇v, redundancy, native   |
|   |                 | constrained solvers, drift of constrained rollouts           |
|   |                 | (models with loops or joint couplings; stages/constrained/)  |
| 4 | contact         | contact_force, generalized_contact_force,                    |
|   |                 | contact_acceleration (shared law; contact fixtures only)     |
| 5 | replay          | open-loop replay of a candidate (harness/stages/replay/)     |
| 6 | derivatives     | ∂v̇/∂(q, v, τ), ∂τ/∂(q, v, v̇) (opt-in)                      |
| – | diagnosis       | why engines loading a user's file as-is disagree             |

The runner (harness/stages/runner.py) evaluates the sampled stages on every engine with
the same inputs, compares every pair, and scores a later stage of a pair only if its
earlier stages agree. A quantity is a function (adapter, inputs) → array (S, ...) of S
samples, with a label per sample; stage 0 quantities may also have a ``declared`` value
computed from the FixtureSpec itself, which every engine is compared against.

``STAGES`` is in report order. The evidence layer and the report import no stage: the
composition root (harness/api.py) hands them ``evidence_hooks()`` and ``stage_views()``,
built from this list; ``register`` adds a stage to it (the report, ``verify`` and the command
line then show it with no other edit).
"""
from __future__ import annotations

from pathlib import Path

from harness.core.records import Record
from harness.stages import derivatives, dynamics, identity, kinematics
from harness.stages.base import Stage
from harness.stages.constrained import roundoff as constrained_roundoff
from harness.stages.constrained import stage as constrained
from harness.stages.contact import stage as contact
from harness.stages.contact import suite as contact_suite
from harness.stages.diagnosis import summary as diagnosis_summary
from harness.stages.diagnosis.causes import NAME as DIAGNOSIS
from harness.stages.replay import cases as replay_cases
from harness.stages.replay import recompute as replay_recompute
from harness.stages.replay import report as replay_report


def _not_against_declared(r) -> bool:  # stage 3's diagnostics against 0
    return r.engine_a != "declared"


def _not_against_closed_form(r) -> bool:  # contact rows against closed forms
    return r.engine_a not in ("analytic", "finite_difference")


def _never(r) -> bool:
    return False


_HERE = Path(__file__).resolve().parent

STAGES: list[Stage] = [
    Stage(identity.NAME, 0, identity.QUANTITIES),
    Stage(kinematics.NAME, 1, kinematics.QUANTITIES),
    Stage(dynamics.NAME, 2, dynamics.QUANTITIES, recompute=dynamics.recompute,
          compared_plainly=dynamics.compared_plainly),
    # evaluated by run_stage: its states live on the constraint manifold
    Stage(constrained.NAME, 3, run=constrained.run_stage,
          report_section=constrained.report_context, template="constrained_section.html.j2",
          template_dir=_HERE / "constrained" / "templates", title="Constrained dynamics",
          in_headline=_not_against_declared, reason_stated=True,
          recompute=constrained_roundoff.recompute),
    Stage(contact.NAME, 4, contact.QUANTITIES, applies=contact.applies,
          report_section=contact_suite.report_context, template="contact_section.html.j2",
          template_dir=_HERE / "contact" / "templates", title="Contact",
          in_headline=_not_against_closed_form),
    # finite-difference engines have their own, looser bound: own headline line, opt-in
    Stage(derivatives.NAME, 6, derivatives.QUANTITIES, opt_in=True, in_headline=_never,
          summary_line=derivatives.summary_line, large_arrays=True),
    Stage(replay_cases.NAME, 5, recompute=replay_recompute.recompute_record,
          manifest_key="replay", manifest_problem=replay_cases.manifest_section_problem,
          thresholds=replay_cases.THRESHOLDS, report_section=replay_report.report_context,
          template="replay_section.html.j2", template_dir=_HERE / "replay" / "templates",
          title="Replay", records_note="replay_records_note.html.j2", plot_rows=False,
          row_tag=replay_report.row_tag, summary_line=replay_report.summary_line,
          in_headline=_never),
    Stage(DIAGNOSIS, None, recompute=dynamics.recompute,
          compared_plainly=dynamics.compared_plainly,
          report_section=diagnosis_summary.report_context,
          template="diagnose_section.html.j2", template_dir=_HERE / "diagnosis" / "templates",
          title="Why the engines disagree", before_ladder=True,
          summary_template="diagnose_banner.html.j2", judged=False, in_headline=_never),
]
_BUILT_IN = len(STAGES)
BY_NAME = {s.name: s for s in STAGES}
SAMPLED = [s for s in STAGES if s.sampled]  # kept in step with STAGES by register()


def in_headline(record: Record) -> bool:
    """Whether ``record`` counts in the headline worst relative error (its stage's rule)."""
    st = BY_NAME.get(record.stage)
    return st is not None and st.in_headline(record)


def register(stage: Stage) -> None:
    """Add ``stage`` to the stage list (after the built-in ones, in report order): the
    runner, ``verify``, the report and the command line then treat it like the others.
    A second stage of the same name raises ValueError."""
    if stage.name in BY_NAME:
        raise ValueError(f"a stage named {stage.name!r} is already registered")
    STAGES.append(stage)
    BY_NAME[stage.name] = stage
    SAMPLED[:] = [s for s in STAGES if s.sampled]


def unregister(name: str) -> None:
    """Remove a stage added by ``register`` (the built-in stages stay)."""
    if name not in BY_NAME or list(BY_NAME).index(name) < _BUILT_IN:
        raise ValueError(f"no registered stage {name!r} to remove")
    STAGES.remove(BY_NAME.pop(name))
    SAMPLED[:] = [s for s in STAGES if s.sampled]


def judged(record: Record) -> bool:
    """Whether ``record`` enters the verdict (a stage whose rows explain does not)."""
    st = BY_NAME.get(record.stage)
    return st is None or st.judged


def summary_lines(scored: list[Record]) -> list[str]:
    """The lines the command line prints under the headline, one per stage that has one
    (``scored``: the judged rows with a relative error)."""
    return [line for s in STAGES if s.summary_line is not None
            for line in [s.summary_line(scored)] if line]
