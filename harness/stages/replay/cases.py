"""Replay cases: what one replay of a candidate is (mode, integrator, native stepping), the
names of its arrays and records, the stage's result, and the strict check of the
manifest's ``replay`` section.

Dimension legend: N knots; nq, nv canonical. Units: s, rad, m (canonical coordinates).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.model.candidate import Candidate
from harness.model.integrators import Method

NAME = "replay"


# tolerance-table entries used by the analysis rather than as a record's own tolerance
THRESHOLDS = ("twin_perturbation", "growth_window", "growth_saturation", "order_refinement")


MODES = ("agreement", "horizon", "convergence")


NATIVE = "native"


REFERENCE_RTOL = 1e-13   # DOP853 reference of a convergence sweep (SciPy's floor is ~2e-14)


REFERENCE_ATOL = 1e-13


# ----- cases -----------------------------------------------------------------------------
@dataclass
class Case:
    """One candidate replayed one way (N knots; nq, nv of the candidate's model).
    ``name`` prefixes its arrays and record ids; ``method`` is the harness integrator of an
    agreement/horizon case, ``sweep`` the (base Method, levels) of a convergence case."""

    name: str
    candidate: Candidate
    mode: str = "agreement"
    method: Method | None = None           # agreement / horizon
    native: bool = True                    # also each engine's own stepping
    native_settings: dict = field(default_factory=dict)  # engine -> settings (else default)
    sweep: tuple = ()                      # convergence: ((Method, levels), ...)

    def __post_init__(self):
        if not _CASE_NAME.match(self.name):
            raise ValueError(f"case name {self.name!r}: use safe_case_name()")
        if self.mode not in MODES:
            raise BadInput("--score", f"must be one of {', '.join(MODES)}")
        if self.mode != "convergence" and self.method is None:
            raise BadInput("--method", "a replay needs an integrator")
        if self.mode == "convergence" and self.candidate.events:
            raise BadInput(self.candidate.path or self.name,
                           "a convergence sweep of a candidate with events is not available "
                           "(score it by agreement or horizon)")
        bad = [c for c in self.candidate.contact_schedule if c["mode"] != "free"]
        if bad:
            raise BadInput(self.candidate.path or self.name,
                           f"contact_schedule has {bad[0]['mode']} intervals: replay with "
                           "contact belongs to stage 4 and is not available for "
                           "unconstrained models")


_CASE_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")


def safe_case_name(name: str) -> str:
    """A case name usable in array keys and record ids ('/' separates their parts)."""
    out = re.sub(r"[^A-Za-z0-9_.\-]", "_", name).strip("._") or "case"
    return out if out != NAME else "case"


@dataclass
class ReplayResult:
    """Stage-5 output: records (stage 'replay'), the arrays they are computed from (keys
    ``replay/<case>/...``), the manifest's ``replay`` section (``info``) and the wall times
    of the runs (``timings``: {case: {run: {engine: [s, ...]}}}). Wall times differ from run
    to run, so they are not evidence: they go to ``timings.json`` beside the bundle, outside
    the sealed manifest, and only feed the speed–accuracy plot."""

    records: list
    arrays: dict
    info: dict
    timings: dict = field(default_factory=dict)


def array_key(case: str, *parts: str) -> str:
    """``replay/<case>/<part>/...``: the key of one of a case's arrays."""
    return "/".join(("replay", case, *parts))


def record_id(case: str, fixture: str, run: str, quantity: str, who: str) -> str:
    """``<case>/replay/<run>/<quantity>/<who>`` (``fixture`` is not part of it)."""
    return f"{case}/{NAME}/{run}/{quantity}/{who}"


CASE_KEYS = {"fixture", "mode", "observer", "frames", "layout", "candidate", "engines",
             "runs", "thresholds"}


def manifest_section_problem(section: dict[str, Any]) -> str:
    """'' if ``section`` (a bundle manifest's ``replay`` entry) has the right shape, else the
    problem (strict: unknown or missing keys are problems)."""
    if set(section) != {"cases"} or not isinstance(section["cases"], dict):
        return "must be {\"cases\": {...}}"
    for name, c in section["cases"].items():
        if not isinstance(c, dict) or set(c) != CASE_KEYS:
            got = sorted(c) if isinstance(c, dict) else type(c).__name__
            return f"case {name!r}: keys {got}, expected {sorted(CASE_KEYS)}"
        if c["mode"] not in MODES:
            return f"case {name!r}: unknown mode {c['mode']!r}"
        if not isinstance(c["runs"], dict) or not isinstance(c["engines"], list):
            return f"case {name!r}: runs must be an object and engines a list"
    return ""


def tolerance_json(q: str) -> dict[str, Any]:
    """{atol, rtol, reason} of the replay tolerance entry ``q``."""
    t = lookup(NAME, q)
    return {"atol": t.atol, "rtol": t.rtol, "reason": t.reason}
