"""The staged comparison: every stage declared once, as a ``Stage`` (harness/stages/base.py).

| # | stage           | quantities                                                   |
|---|-----------------|--------------------------------------------------------------|
| 0 | model_identity  | total_mass, group_inertia (per joint), mass_matrix_neutral   |
| 1 | kinematics      | frame_pose, frame_jacobian (every body and named frame)      |
| 2 | dynamics        | mass_matrix, bias_forces, forward_dynamics, inverse_dynamics |
| 3 | constrained     | KKT v̇ and λ of holonomic loops, J, J̇v, redundancy, native   |
|   |                 | constrained solvers, drift of constrained rollouts           |
|   |                 | (constraint fixtures only; harness/stages/constrained/)      |
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
composition root (harness/api.py) hands them ``evidence_hooks()`` and ``report_sections``.
"""
from __future__ import annotations

from harness.stages import derivatives, dynamics, identity, kinematics
from harness.stages.base import Stage
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


STAGES: tuple[Stage, ...] = (
    Stage(identity.NAME, 0, identity.QUANTITIES),
    Stage(kinematics.NAME, 1, kinematics.QUANTITIES),
    Stage(dynamics.NAME, 2, dynamics.QUANTITIES, recompute=dynamics.recompute),
    # evaluated by run_stage: its states live on the constraint manifold
    Stage(constrained.NAME, 3, run=constrained.run_stage,
          report_section=constrained.report_context, template="constrained_section.html.j2",
          in_headline=_not_against_declared),
    Stage(contact.NAME, 4, contact.QUANTITIES, applies=contact.applies,
          report_section=contact_suite.report_context, template="contact_section.html.j2",
          in_headline=_not_against_closed_form),
    # finite-difference engines have their own, looser bound: own headline line, opt-in
    Stage(derivatives.NAME, 6, derivatives.QUANTITIES, opt_in=True, in_headline=_never),
    Stage(replay_cases.NAME, 5, recompute=replay_recompute.recompute_record,
          manifest_key="replay", manifest_problem=replay_cases.manifest_section_problem,
          thresholds=replay_cases.THRESHOLDS, report_section=replay_report.report_context,
          template="replay_section.html.j2",
          in_headline=_never),
    Stage(DIAGNOSIS, None, recompute=dynamics.recompute,
          report_section=diagnosis_summary.report_context,
          template="diagnose_section.html.j2", in_headline=_never),
)
BY_NAME = {s.name: s for s in STAGES}
SAMPLED = tuple(s for s in STAGES if s.sampled)


def in_headline(record) -> bool:
    """Whether ``record`` counts in the headline worst relative error (its stage's rule)."""
    st = BY_NAME.get(record.stage)
    return st is not None and st.in_headline(record)


def report_sections(manifest: dict, records: list, arrays: dict | None,
                    timings: dict | None = None) -> dict:
    """{stage name: (template, context)} of every stage section the bundle has content for."""
    out = {}
    for s in STAGES:
        if s.report_section is None or arrays is None:
            continue
        ctx = s.report_section(manifest, records, arrays, timings)
        if ctx:
            out[s.name] = (s.template, ctx)
    return out
