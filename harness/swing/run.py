"""A swing run end to end: the fit (harness/swing/pipeline.py), the replay of its
candidate in every engine (a callback from the composition root), the checks against the
tolerance table, and the output folder written atomically.

Units: positions m (reported in mm), speeds m/s, forces N, moments N·m, times s.
"""
from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixtures.golfers import CLUB_CHOICES, GRIPS, SHAFTS
from harness.core import figures
from harness.core.errors import BadInput
from harness.core.io import (
    OutputKind,
    claims_output,
    put_file,
    swap_in,
    temp_folder,
)
from harness.core.strict import read_json
from harness.evidence import bundle as evidence
from harness.model import candidate
from harness.stages.replay.cases import NAME as REPLAY
from harness.swing import checks, pipeline, segments
from harness.swing import dimension as swing_dim
from harness.swing import report as swing_report
from harness.swing import study as swing_study
from harness.swing.summary import SwingSummary

# fit/fit.json: the swing summary (harness/swing/pipeline.py document, written once by
# write_fit_json), "replay" when the candidate was replayed in the engines, "study" with
# --study (harness/swing/study.py), "dimension" with --dimension
# (harness/swing/dimension.py), "activation" with --activation (harness/swing/activation.py)
SUMMARY_KEYS = {"capture", "settings", "model", "window", "calibration", "ik", "fit",
                "identifiability", "reintegration", "wall_s", "candidate", "trajectory",
                "ground", "summary"}


_OPTIONAL_KEYS = {"replay", "study", "dimension", "activation", "shaft"}


def recognise_summary(path: Path) -> None:
    """BadInput unless ``path`` is a swing's fit.json as this harness writes it (the
    summary's fields, no others: an unknown field such as a ``schema_version`` this
    harness never wrote is refused, and named)."""
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise BadInput(str(path), "not a swing summary (not a JSON object)")
    missing = sorted(SUMMARY_KEYS - set(doc))
    unknown = sorted(set(doc) - SUMMARY_KEYS - _OPTIONAL_KEYS)
    if missing or unknown:
        version = f"schema_version {doc['schema_version']!r}, which this harness does not " \
                  "write; " if "schema_version" in doc else ""
        raise BadInput(str(path), f"not a swing summary this harness reads ({version}"
                                  f"unknown fields {unknown}, missing {missing})")



# what a swing output folder may hold (the output-folder rule, harness/core/io.py)
FIT = OutputKind("a swing fit", "fit.json", recognise_summary,
                 frozenset({"fit.json", "golfer.urdf", "candidate.json", "candidate.npz",
                            "trajectory.npz"}))
OUTPUT = OutputKind("a swing output folder", "fit/fit.json", recognise_summary,
                    frozenset({"index.html", "plotly.min.js"}),
                    {"fit": FIT, "replay": evidence.OUTPUT,
                     segments.BUNDLE: evidence.OUTPUT})


@dataclass
class SwingOutcome:
    """``path``: the output folder; ``assessment``: the checks' verdict
    (harness/swing/checks.py); ``summary``: fit.json's document; ``figures``: its typed
    view (harness/swing/summary.py)."""

    path: Path
    assessment: checks.Assessment
    summary: dict
    figures: SwingSummary

    @property
    def checks(self) -> list:
        """[{name, value, target, ok}] with ok None for a figure reported without a
        threshold."""
        return list(self.assessment.rows)

    @property
    def exit_code(self) -> int:
        return self.assessment.exit_code

    @property
    def report(self) -> Path:
        return self.path / "index.html"


@claims_output(OUTPUT)  # the --out rule checked and the folder locked before anything runs
def swing(capture_path: str | os.PathLike[str], *, out: str | os.PathLike[str],
          quick: bool = False, up: str = "auto", cutoff_hz: float | None = None,
          club: str = "auto",
          replay_fn: Callable[..., tuple[list[str], Any]] | None = None,
          progress: Callable[[str], None] | None = None, study: bool = False,
          dimension: bool = False, joint_limits: bool = True, activation: bool = False,
          grip: str = "weld", shaft: str = "rigid",
          club_masses: str | Sequence[float] | None = None,
          loft_deg: float | None = None, impulse_prior: str = "law",
          ring: bool = True) -> SwingOutcome:
    """ingest → IK → fit → candidate → replay in every engine (``replay_fn([(case name or
    None, candidate, mode)], method, folder[, title])`` → (case names, outcome), supplied
    by the composition root; None: stop after the fit; harness/swing/segments.py for
    the segmented replay) → ``out``/index.html. ``study``: the knot density, smoothness
    and effort weights chosen on a synthetic truth (harness/swing/study.py); ``dimension``: the
    wrists' deviation kept or locked, chosen on held-out frames
    (harness/swing/dimension.py); each adds a report section. ``joint_limits``: the
    dynamic fit holds the golfer's joint limits (default; False releases them; the IK
    always holds them). ``activation``: a
    refit with the upper body's actuators activation-driven, reported beside the fit
    (harness/swing/activation.py; a report section). ``grip``: the club welded ("weld")
    or hinged ("hinge") in the lead hand; ``shaft``: rigid or bending at one point ("flex")
    (fixtures/golfers.py); ``club_masses``: a weighed club's (whole, head) [kg], as
    "TOTAL,HEAD" or a pair (default: the club's typical masses); ``loft_deg``: the face's
    loft [deg] for the ball's collision law (None: the club's); ``impulse_prior``: "law"
    or "free", Λ's prior in the fit (pipeline.SwingSettings); ``ring``: the club head's
    ringing on the shaft after contact tried beside none (default). exit_code 0 if every
    swing check is met and the replay's records pass, 1 otherwise; BadInput for bad
    input."""
    say = progress or (lambda msg: None)
    if club not in CLUB_CHOICES:
        raise BadInput("--club", f"must be one of {', '.join(CLUB_CHOICES)}, got {club!r}")
    if grip not in GRIPS:
        raise BadInput("--grip", f"must be one of {', '.join(GRIPS)}, got {grip!r}")
    if shaft not in SHAFTS:
        raise BadInput("--shaft", f"must be one of {', '.join(SHAFTS)}, got {shaft!r}")
    masses = pipeline.club_masses(club_masses)
    if loft_deg is not None and not 0.0 <= loft_deg < 80.0:
        raise BadInput("--loft", f"must lie in [0, 80) degrees, got {loft_deg!r}")
    import dataclasses

    settings = dataclasses.replace(pipeline.QUICK if quick else pipeline.SwingSettings(),
                                   club=club, joint_limits=joint_limits, grip=grip,
                                   shaft=shaft, club_masses_kg=masses,
                                   activation=activation, loft_deg=loft_deg,
                                   impulse_prior=impulse_prior, ring=ring)
    pipeline.impulse_prior(settings)
    tmp = temp_folder(out)  # beside out; those of killed runs are removed first
    try:
        fs = pipeline.fit_capture(capture_path, tmp, settings, up=up, cutoff_hz=cutoff_hz,
                                  say=say)
        replay = _replay(fs, settings, replay_fn, tmp) if replay_fn is not None else None
        sections = _studies(fs, tmp, settings, study, dimension, say)
        doc = pipeline.document(fs, tmp, replay=replay and replay.section,
                                replay_ok=replay.ok if replay else None, **sections)
        pipeline.write_fit_json(tmp, doc)  # the one writer of fit.json
        facts = checks.Facts(SwingSummary.of(doc), replayed=replay is not None,
                             replay_records=replay.records if replay else (),
                             replay_ok=replay.ok if replay else True)
        verdict = checks.assess(facts)
        html = swing_report.render(pipeline._finite(doc), fs.arrays,
                                   fs.golfer.adapter.joint_names, list(verdict.rows),
                                   facts.replay_records, title=f"Swing fit: {capture_path}",
                                   figures=facts.summary)
        (tmp / "index.html").write_text(html)
        put_file(tmp / figures.ASSET, figures.plotly_asset())
        swap_in(tmp, out, OUTPUT)  # the rule checked again, then one atomic exchange
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return SwingOutcome(out, verdict, doc, facts.summary)


@dataclass(frozen=True)
class ReplayOutcome:
    """The candidate's replay in every engine: ``section`` fit.json's ``replay`` (the
    engines' marker deviations [m], grip closure [m], energy balance [J]), ``records``
    the replay stage's records, ``ok`` whether every scored record passed."""

    section: dict
    records: tuple
    ok: bool


def _replay(fs, settings, replay_fn, tmp: Path) -> ReplayOutcome:
    """The candidate replayed in every engine (``replay_fn``, from the composition root):
    first over the whole window in horizon mode (DIR/replay/), then segment by segment
    (``_segmented``, DIR/replay_segments/); the engines' series added to ``fs.arrays``
    for the report."""
    cand = candidate.load(fs.candidate_path)
    method = pipeline.reintegration_method(settings)
    (case_name,), result = replay_fn([(None, cand, "horizon")], method, tmp / "replay")
    arrays = fs.arrays
    arrays["engine_markers"] = pipeline.engine_markers(result.arrays, case_name,
                                                       arrays["markers_replay"])
    arrays["energy"] = pipeline.engine_energy(result.arrays, case_name)
    engine_dev = pipeline.engine_replay_deviation(arrays["engine_markers"],
                                                  arrays["markers_replay"])
    grip = pipeline.engine_grip_closure(result.arrays, case_name, list(cand.model.frames),
                                        [(a, b) for a, b, _ in pipeline.GRIP_PAIRS])
    section = {"method": method.settings(),
               "grip_closure_max_m": grip,
               "engine_marker_deviation_m": {e: {"rms": r_, "max": m_}
                                             for e, (r_, m_) in engine_dev.items()},
               "energy_balance": pipeline.energy_summary(arrays["energy"])}
    records = [r for r in result.records if r.stage == REPLAY]
    ok = all(r.status == "passed" for r in result.records
             if r.status not in ("not_provided",))
    seg, seg_records, seg_ok = _segmented(fs, cand, method, replay_fn, tmp,
                                          section["energy_balance"])
    if seg is not None:
        section["segments"] = seg
        arrays["segments"] = seg
    return ReplayOutcome(section, tuple(records + seg_records), ok and seg_ok)


def _segmented(fs, cand, method, replay_fn, tmp: Path, energy: dict) -> tuple:
    """The segmented replay (harness/swing/segments.py): the replay knots tiled into
    segments no longer than the whole-window replay's predictability horizon (the
    shortest of the engines' scored windows), each started from the fitted state at its
    start and replayed in every engine (agreement mode: every record scores the whole
    segment); per segment and engine the markers against the fit's and the measured
    ones. Returns (fit.json's ``replay.segments`` or None without a horizon, the records,
    whether every record passed)."""
    until = [d["scored_until_s"] for d in energy.values() if "scored_until_s" in d]
    if not until:
        return None, [], True
    t = cand.t
    horizon = float(min(until) - t[0])
    tiles = segments.tile(t, segments.degree_of(cand), horizon)
    fit = fs.fit
    cases = [(segments.case_name(i, len(tiles), t, a, b),
              segments.candidate(cand, a, b, fit.q_replay, fit.v_replay), "agreement")
             for i, (a, b) in enumerate(tiles)]
    names, result = replay_fn(cases, method, tmp / segments.BUNDLE,
                              "Segmented replay of the swing fit")
    fitted = fs.arrays["markers_replay"]
    limit = float(fit.result.marker_rmse(fit.in_down))
    t_e = fit.impact["t_e_s"] if fit.impact is not None else None
    records = [r for r in result.records if r.stage == REPLAY]
    engines: set = set()
    out = []
    for i, ((a, b), name) in enumerate(zip(tiles, names)):
        mk = pipeline.engine_markers(result.arrays, name, fitted[a:b + 1])
        engines |= set(mk)
        fig = segments.compare(t, a, b, fitted, mk, fit.result.t, fs.arrays["y"])
        out.append({"index": i, "case": name, "knots": [a, b],
                    "t_s": [float(t[a]), float(t[b])],
                    "holds_impact": bool(t_e is not None and t[a] < t_e < t[b]),
                    "limit_m": limit, "records": segments.record_counts(records, name)}
                   | fig)
    section = {"what": "the replay knots tiled into segments no longer than the "
                       "predictability horizon, each replayed in every engine from the "
                       "fitted state at its start (the impact's segment through the "
                       "fitted impulse's reset)",
               "bundle": segments.BUNDLE, "horizon_s": horizon, "mode": "agreement",
               "engines": sorted(engines | set(energy)), "list": out}
    ok = all(r.status == "passed" for r in result.records
             if r.status not in ("not_provided",))
    return section, records, ok


def _studies(fs, tmp: Path, settings, study: bool, dimension: bool, say) -> dict:
    """{"study": …, "dimension": …}: the sections of the studies asked for, each run on
    the fit's folder with its fit.json document given in memory (the file is written
    once, after them)."""
    out = {}
    if not (study or dimension):
        return out
    plain = json.loads(json.dumps(pipeline._finite(pipeline.document(fs, tmp)),
                                  allow_nan=False))   # what fit.json would hold
    if study:
        say("study: the knot density, smoothness and effort weights on a synthetic "
            "truth from this fit")
        out["study"] = swing_study.run_study(tmp, settings, say=say, doc=plain)
    if dimension:
        say(f"dimension: the golfer with and without the {swing_dim.STEP[0]}, on "
            "held-out frames")
        out["dimension"] = swing_dim.plain(swing_dim.run_dimension(tmp, say=say, doc=plain))
    return out
