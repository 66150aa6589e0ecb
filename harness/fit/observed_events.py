"""Event observations given on the command line (`harness fit ... --event
NAME=TIME±SIGMA:LABEL`), and the check of a measured event against the fit.

Dimension legend: k observed events. Times and their σ in seconds.

**Syntax.** ``NAME=TIME±SIGMA:LABEL``: NAME is the problem's event kind followed by the
event's index in time order (``impact1`` the first impact of the bounce problem), TIME
and SIGMA numbers in seconds (SIGMA > 0; ``+-`` or ``+/-`` may stand for ``±``), LABEL
one of the candidate schema's MODE_LABELS (measured, inferred, assumed). Anything else is
refused in one line naming ``--event`` and the problem (``parse_events``), before any
fit runs.

**What a label does** (harness/fit/schedules.py): only a measured event adds the residual
(t(θ) − t̂)/σ to the fit's objective; an inferred or assumed one is listed beside the fit
and never scored.

**The conflict check** (``check``). A measured event is held against what the data alone
say of that event: t_d ± se_d from the same fit without any measured event. With the
measurement t̂ ± σ independent of the data,

    z = (t_d − t̂) / √(σ² + se_d²)

is standard normal when both are right; |z| above the tolerance table's
("schedules", "event_conflict_z") (3) is a conflict. (For a model linear in the event
time this z equals the joint fit's standardised residual (t_j − t̂)/√(σ² − se_j²), where
t_j ± se_j is the fit with the event scored; both are written.)
"""
from __future__ import annotations

import math
import re
from typing import Sequence

from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.fit.schedules import EventObservation
from harness.model.candidate import MODE_LABELS

SYNTAX = "NAME=TIME±SIGMA:LABEL"
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_PATTERN = re.compile(rf"^(?P<name>[A-Za-z_]+(?P<index>\d+))=(?P<t>{_NUM})"
                      rf"(?:±|\+-|\+/-)(?P<s>{_NUM}):(?P<label>[a-z]+)$")


def _parse_one(text: str, kind: str) -> EventObservation:
    """One ``--event`` value (module docstring) as an EventObservation; BadInput naming
    ``--event`` and what is wrong."""
    raw = "".join(str(text).split())
    m = _PATTERN.match(raw)
    if m is None:
        why = ("no '=' between the name and the time" if "=" not in raw else
               "no ± (or +-) between the time and its sigma"
               if not re.search(r"±|\+-|\+/-", raw) else
               "no ':LABEL' after the sigma" if ":" not in raw else
               "the name must be a word followed by an index (e.g. impact1), the time and "
               "sigma numbers in seconds")
        raise BadInput("--event", f"{text!r}: {why} (expected {SYNTAX}, LABEL one of "
                                  f"{', '.join(MODE_LABELS)})")
    name, label = m.group("name"), m.group("label")
    if name[:-len(m.group("index"))] != kind:
        raise BadInput("--event", f"{text!r}: unknown event {name!r} (this problem's "
                                  f"events are {kind}1, {kind}2, … in time order)")
    if label not in MODE_LABELS:
        raise BadInput("--event", f"{text!r}: label {label!r} is not one of "
                                  f"{', '.join(MODE_LABELS)}")
    t_s, sigma_s, index = float(m.group("t")), float(m.group("s")), int(m.group("index"))
    if not (math.isfinite(t_s) and t_s >= 0):
        raise BadInput("--event", f"{text!r}: the time must be a finite number of seconds "
                                  ">= 0")
    if not (math.isfinite(sigma_s) and sigma_s > 0):
        raise BadInput("--event", f"{text!r}: sigma must be a finite number of seconds > 0")
    if index < 1:
        raise BadInput("--event", f"{text!r}: event indices start at 1 ({kind}1)")
    return EventObservation(index, t_s, sigma_s, label)


def parse_events(texts: Sequence[str], kind: str, problem: str) -> tuple[EventObservation, ...]:
    """The ``--event`` values ``texts`` of `harness fit --problem <problem>` whose events
    are called ``kind`` + index ("" when the problem has none), in the order given;
    BadInput naming ``--event`` for a value that does not parse, an event named twice, or
    a problem without events."""
    if not texts:
        return ()
    if not kind:
        raise BadInput("--event", f"--problem {problem} has no events")
    out = tuple(_parse_one(t, kind) for t in texts)
    seen = [ev.index for ev in out]
    dup = sorted({i for i in seen if seen.count(i) > 1})
    if dup:
        raise BadInput("--event", f"{kind}{dup[0]} is given more than once")
    return out


def threshold() -> float:
    """|z| [–] beyond which a measured event conflicts with the fit (tolerance table)."""
    return lookup("schedules", "event_conflict_z").atol


def check(observations: Sequence[EventObservation], kind: str,
          joint: Sequence[tuple[float, float]], alone: Sequence[tuple[float, float]],
          fitted_how: str) -> dict:
    """fit.json's ``event_observations``: per observed event (in ``observations`` order)
    its name, label, given time ± σ [s], the fitted time ± se [s] with the measured events
    scored (``joint``, (t, se) per observation) and from the data alone (``alone``), z
    [–] (module docstring; for every label, a conflict only for a measured one) and
    ``conflict``; top-level ``conflict`` when any measured event conflicts."""
    thr = threshold()
    rows = []
    for ev, (tj, sj), (td, sd) in zip(observations, joint, alone):
        z = (td - ev.t_s) / math.sqrt(ev.sigma_s ** 2 + sd ** 2)
        resid_var = ev.sigma_s ** 2 - sj ** 2
        rows.append({"name": f"{kind}{ev.index}", "index": ev.index, "label": ev.label,
                     "scored": ev.scored, "given": {"t_s": ev.t_s, "sigma_s": ev.sigma_s},
                     "fitted": {"t_s": float(tj), "se_s": float(sj)},
                     "data_alone": {"t_s": float(td), "se_s": float(sd)},
                     "z": float(z),
                     "z_joint": (float((tj - ev.t_s) / math.sqrt(resid_var))
                                 if ev.scored and resid_var > 0 else None),
                     "conflict": bool(ev.scored and abs(z) > thr)})
    return {"rows": rows, "threshold_z": thr, "conflict": any(r["conflict"] for r in rows),
            "rule": "z = (t_data_alone − t_given) / √(σ_given² + se_data_alone²); a "
                    f"measured event with |z| > {thr:g} conflicts with the data",
            "fitted_how": fitted_how}


def conflict_lines(doc: dict) -> list[str]:
    """One line per conflicting measured event of a fit.json ``doc`` (none without
    ``event_observations``)."""
    eo = doc.get("event_observations")
    if not eo:
        return []
    return [f"CONFLICT: measured {r['name']} {r['given']['t_s']:.6f} ± "
            f"{r['given']['sigma_s']:.2g} s, the data alone place it at "
            f"{r['data_alone']['t_s']:.6f} ± {r['data_alone']['se_s']:.2g} s "
            f"(z = {r['z']:+.2f}, beyond ±{eo['threshold_z']:g})"
            for r in eo["rows"] if r["conflict"]]
