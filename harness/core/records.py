"""Comparison records: one row per (stage, fixture, quantity, engine pair).

A record is computed from two stored arrays by ``compare`` and nothing else; ``verify``
(harness/evidence/bundle.py) calls the same function on the arrays read back from a bundle.

Statuses:
  passed / failed  a comparison was made; ``passed`` is True / False
  not_scored       an earlier stage of this pair disagreed (``reason`` names it)
  not_provided     the engine has no API of its own for the quantity (``reason``)
  error            the engine raised while computing it (``reason`` has the message)
  unconverged      replay (stage 5) only: the comparison was made, but the run it was
                   computed from moved by more than the refinement gate when its step was
                   halved (or its tolerance tightened): neither passed nor failed
  informational    constrained (stage 3) only: a measured difference with no verdict — a
                   soft or velocity-level native solver (MuJoCo equality, Drake SAP)
                   against the exact KKT answer, a rollout's drift without projection, or
                   a note (dependent constraint rows): the numbers are shown, never scored
Only ``passed``, ``failed``, ``unconverged`` and ``informational`` rows carry numbers;
``passed`` is null unless the status is passed or failed.

Numbers: ``max_abs`` is the largest |a − b| over samples, in the quantity's SI unit
(``unit_of``); ``max_rel`` the largest |a − b| / max(|a|, |b|) per sample. The relative
error of a sample that compares a nonzero value with an exact zero (a check against zero:
a constraint residual, an analytic velocity of 0, an energy balance with no work done) is
undefined; a record with such a sample has ``max_rel`` null and ``max_abs`` set, and is
judged and shown by its absolute error against ``atol``. Both null on a compared row:
non-finite values (``reason`` says so).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.tolerances import Tolerance

# A row label per sample: a list of strings, or the array of them read back from a bundle.
Labels = Sequence[Any] | NDArray[Any]

_V = TypeVar("_V")

STATUSES = ("passed", "failed", "not_scored", "not_provided", "error", "unconverged",
            "informational")


@dataclass
class Record:
    id: str
    stage: str
    fixture: str
    quantity: str
    engine_a: str
    engine_b: str
    status: str
    passed: bool | None = None
    max_abs: float | None = None
    max_rel: float | None = None
    atol: float | None = None
    rtol: float | None = None
    n_samples: int = 0
    worst_sample: int | None = None
    worst_label: str = ""
    key_a: str = ""
    key_b: str = ""
    key_labels: str = ""
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        """Every field by name. The fields are scalars and strings, so a plain dict of them
        is what dataclasses.asdict gives, without its recursive deep copy (1 s of a
        qualification's 4000 records)."""
        return {name: getattr(self, name) for name in _RECORD_FIELDS}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Record":
        if d.keys() != _FIELD_NAMES:
            unknown, missing = set(d) - _FIELD_NAMES, _FIELD_NAMES - set(d)
            raise ValueError(f"record fields: unknown {sorted(unknown)}, missing {sorted(missing)}")
        for name, plain, rule in _FIELD_RULES:  # one check per field (its type's rule)
            v = d[name]
            if type(v) not in plain and not rule(v):
                raise ValueError(f"record field {name} has the wrong type ({type(v).__name__})")
        r = cls(**d)
        if r.status not in STATUSES:
            raise ValueError(f"record {r.id}: unknown status {r.status!r}")
        return r


_RECORD_FIELDS = tuple(f.name for f in fields(Record))
# (name, type) of each field, its type as written (the module has postponed annotations)
_FIELD_TYPES = tuple((f.name, str(f.type)) for f in fields(Record))


def _num_not_bool(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _int_not_bool(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_TYPE_RULES: dict[str, Any] = {
    "str": lambda v: isinstance(v, str),
    "bool | None": lambda v: v is None or isinstance(v, bool),
    "float | None": lambda v: v is None or _num_not_bool(v),
    "int": _int_not_bool,
    "int | None": lambda v: v is None or _int_not_bool(v),
}
# the exact types JSON gives that each rule accepts (the rule itself decides for the rest)
_PLAIN_TYPES: dict[str, frozenset[type]] = {
    "str": frozenset({str}), "bool | None": frozenset({bool, type(None)}),
    "float | None": frozenset({float, int, type(None)}), "int": frozenset({int}),
    "int | None": frozenset({int, type(None)})}
_FIELD_NAMES = frozenset(_RECORD_FIELDS)
# (name, plain types, rule) of each field (a field type without a rule fails at import)
_FIELD_RULES = tuple((name, _PLAIN_TYPES[t], _TYPE_RULES[t]) for name, t in _FIELD_TYPES)


def measure(a: ArrayLike, b: ArrayLike, tol: Tolerance, floor: ArrayLike | None = None
            ) -> tuple[float, float, int, bool]:
    """(max_abs, max_rel, worst sample index, passed) for arrays of shape (S, ...); floor
    (S,), if given, is each sample's atol in place of tol.atol (a bound derived from the
    round-off of the quantity's own terms at that sample).

    max_abs and max_rel are inf when a value is non-finite; max_rel is NaN when the relative
    error is undefined: some sample compares a nonzero value with an exact zero (every entry
    of one side 0, not of the other). The verdict is err ≤ atol + rtol·scale per sample
    either way."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"shape mismatch {a.shape} vs {b.shape}")
    S = a.shape[0]
    if S == 0:
        raise ValueError("no samples")
    a2, b2 = a.reshape(S, -1), b.reshape(S, -1)
    err = np.abs(a2 - b2).max(axis=1)
    sa, sb = np.abs(a2).max(axis=1), np.abs(b2).max(axis=1)
    scale = np.maximum(sa, sb)  # NaN where a value is NaN, inf where one is inf
    finite = bool(np.isfinite(scale).all())  # every value of a and b finite
    against_zero = bool(((sa == 0) != (sb == 0)).any())
    atol = tol.atol if floor is None else np.asarray(floor, dtype=float)
    bound = atol + tol.rtol * scale
    passed = finite and bool((err <= bound).all())
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(scale > 0, err / np.where(scale > 0, scale, 1.0),
                       np.where(err > 0, np.inf, 0.0))
        # worst sample: the one furthest beyond its bound (by ratio err / bound)
        ratio = np.where(bound > 0, err / np.where(bound > 0, bound, 1.0),
                         np.where(err > 0, np.inf, 0.0))
    ratio = np.where(np.isnan(ratio) | np.isnan(err) | np.isnan(bound), np.inf, ratio)
    worst = int(np.argmax(ratio))  # a non-finite sample is the worst: it is named
    # a finite row has no NaN in err nor rel: their max is nanmax
    max_abs = float(err.max()) if finite else float("inf")
    max_rel = (float("inf") if not finite else float("nan") if against_zero
               else float(rel.max()))
    return max_abs, max_rel, worst, passed


def _numbers(max_abs: float, max_rel: float) -> tuple[float | None, float | None]:
    """Record fields (max_abs, max_rel) of measure's numbers: both None when a value is
    non-finite; max_rel None when it is undefined (a check against zero)."""
    if not math.isfinite(max_abs):
        return None, None
    return max_abs, (max_rel if math.isfinite(max_rel) else None)


def terms_floor(rid: str, a: ArrayLike, terms: ArrayLike, atol: float,
                f: float) -> NDArray[np.float64]:
    """The per-state absolute floor max(atol, f·T_s) (S,) [the quantity's unit] of a
    comparison whose quantity is a sum of terms of magnitude T_s (S,) that may cancel to an
    exact 0: round-off of f·T_s. ValueError when T does not have one value per state of
    ``a`` (S, ...)."""
    T = np.asarray(terms, dtype=float)
    S = np.asarray(a).shape[0]
    if T.shape != (S,):
        raise ValueError(f"{rid}: terms have shape {T.shape}, expected ({S},)")
    out: NDArray[np.float64] = np.maximum(atol, f * T)
    return out


def compare(rid: str, stage: str, fixture: str, quantity: str, engine_a: str, engine_b: str,
            a: ArrayLike, b: ArrayLike, tol: Tolerance, key_a: str, key_b: str,
            labels: Labels | None = None, key_labels: str = "",
            floor: ArrayLike | None = None) -> Record:
    """The passed/failed record of a (S, ...) against b (S, ...), S samples, in the
    quantity's SI unit (``unit_of``), judged by ``tol`` (with floor (S,) each sample's atol,
    if given); key_a, key_b name the arrays in the bundle, labels (S,) the samples."""
    abs_m, rel_m, worst, passed = measure(a, b, tol, floor)
    return _compared(rid, stage, fixture, quantity, engine_a, engine_b, a, b, tol, key_a,
                     key_b, labels, key_labels, floor, (abs_m, rel_m, worst, passed))


def _compared(rid: str, stage: str, fixture: str, quantity: str, engine_a: str,
              engine_b: str, a: ArrayLike, b: ArrayLike, tol: Tolerance, key_a: str,
              key_b: str, labels: Labels | None, key_labels: str, floor: ArrayLike | None,
              measured: tuple[float, float, int, bool]) -> Record:
    """``compare``'s record of a (S, ...) against b (S, ...) from ``measure``'s numbers."""
    abs_m, rel_m, worst, passed = measured
    finite = math.isfinite(abs_m)
    max_abs, max_rel = _numbers(abs_m, rel_m)
    return Record(id=rid, stage=stage, fixture=fixture, quantity=quantity,
                  engine_a=engine_a, engine_b=engine_b,
                  status="passed" if passed else "failed", passed=passed,
                  max_abs=max_abs, max_rel=max_rel,
                  atol=tol.atol, rtol=tol.rtol,
                  n_samples=int(np.asarray(a).shape[0]), worst_sample=worst,
                  worst_label=str(labels[worst]) if labels is not None else f"sample {worst}",
                  key_a=key_a, key_b=key_b, key_labels=key_labels,
                  reason=("non-finite values in an engine's output" if not finite else
                          "" if passed else failure_text(stage, quantity, a, b, tol, worst,
                                                         labels, floor)))


def compare_each(rows: Sequence[tuple[Any, ...]]) -> list[Record | Exception]:
    """``compare(*row)`` of every row (compare's positional arguments rid … key_labels, no
    floor), or the ValueError, IndexError or TypeError it raises: the same records, bit for
    bit. Rows whose arrays are finite and of one shape (S, ...) are measured together, one
    stack per shape: ``measure``'s elementwise operations and maxima on each row, without
    numpy's cost per call (about 0.1 ms a row, and ``verify`` recomputes some 3000 such
    rows of a qualification). Every other row goes through ``compare`` itself."""
    rows = [(*row, None, "")[:13] for row in rows]  # labels and key_labels are optional
    out: list[Record | Exception | None] = [None] * len(rows)
    pairs: dict[int, tuple[NDArray[np.float64], NDArray[np.float64]]] = {}
    groups: dict[tuple[int, ...], list[int]] = {}
    for i, row in enumerate(rows):
        try:
            a, b = np.asarray(row[6], dtype=float), np.asarray(row[7], dtype=float)
        except (ValueError, TypeError):
            continue
        if a.shape == b.shape and a.ndim >= 1 and a.size > 0:
            pairs[i] = (a, b)
            groups.setdefault(a.shape, []).append(i)
    for shape, idx in groups.items():
        atol = np.array([rows[i][8].atol for i in idx], dtype=float)[:, None]
        rtol = np.array([rows[i][8].rtol for i in idx], dtype=float)[:, None]
        err, sa, sb = _sample_maxima([pairs[i] for i in idx], shape)
        scale = np.maximum(sa, sb)  # NaN where a value is NaN, inf where one is inf
        lane = np.isfinite(scale).all(axis=1)  # finite rows: measure's formulas, stacked
        bound = atol + rtol * scale
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            rel = np.where(scale > 0, err / np.where(scale > 0, scale, 1.0),
                           np.where(err > 0, np.inf, 0.0))
            ratio = np.where(bound > 0, err / np.where(bound > 0, bound, 1.0),
                             np.where(err > 0, np.inf, 0.0))
        ratio = np.where(np.isnan(ratio) | np.isnan(err) | np.isnan(bound), np.inf, ratio)
        worst = ratio.argmax(axis=1)
        passed = (err <= bound).all(axis=1)
        against_zero = ((sa == 0) != (sb == 0)).any(axis=1)
        max_abs, max_rel = err.max(axis=1), rel.max(axis=1)  # no NaN in a finite row
        for j in np.flatnonzero(lane):
            rid, st, fx, q, ea, eb, a, b, tol, ka, kb, labels, kl = rows[idx[j]]
            numbers = (float(max_abs[j]),
                       float("nan") if against_zero[j] else float(max_rel[j]),
                       int(worst[j]), bool(passed[j]))
            out[idx[j]] = _compared(rid, st, fx, q, ea, eb, a, b, tol, ka, kb, labels, kl,
                                    None, numbers)
    for i, row in enumerate(rows):
        if out[i] is None:
            try:
                out[i] = compare(*row)
            except (ValueError, IndexError, TypeError) as e:
                out[i] = e
    return out  # type: ignore[return-value]  # every entry set just above


# arrays of at least this many values are measured a row at a time (a stack of them would
# copy megabytes; numpy's cost per call is then small beside the work)
_ROW_AT_A_TIME = 1 << 14


def _sample_maxima(pairs: list[tuple[NDArray[np.float64], NDArray[np.float64]]],
                   shape: tuple[int, ...]) -> tuple[NDArray[np.float64], ...]:
    """(max |a − b|, max |a|, max |b|) over each sample's values, each (n, S), of n pairs
    of arrays of ``shape`` (S, ...): ``measure``'s maxima of each pair, exactly (the same
    elementwise operations; a maximum does not round). Small arrays are stacked and
    measured at once; large ones a pair at a time, through one scratch array."""
    n, S = len(pairs), shape[0]
    if math.prod(shape) < _ROW_AT_A_TIME:
        A = np.stack([a for a, _ in pairs]).reshape(n, S, -1)  # copies: changed in place
        B = np.stack([b for _, b in pairs]).reshape(n, S, -1)
        D = np.subtract(A, B)
        return (np.abs(D, out=D).max(axis=2), np.abs(A, out=A).max(axis=2),
                np.abs(B, out=B).max(axis=2))
    err, sa, sb = np.empty((n, S)), np.empty((n, S)), np.empty((n, S))
    scratch = np.empty((S, math.prod(shape[1:])))
    for j, (a, b) in enumerate(pairs):
        a2, b2 = a.reshape(S, -1), b.reshape(S, -1)  # the bundle's arrays: only read
        np.abs(np.subtract(a2, b2, out=scratch), out=scratch).max(axis=1, out=err[j])
        np.abs(a2, out=scratch).max(axis=1, out=sa[j])
        np.abs(b2, out=scratch).max(axis=1, out=sb[j])
    return err, sa, sb


# a recompute pass's values derived from a bundle's arrays (``recompute_pass``), else None
_PASS: ContextVar[dict[str, Any] | None] = ContextVar("recompute_pass", default=None)


@contextmanager
def recompute_pass() -> Iterator[None]:
    """Within it, ``memoized`` computes each key once (``verify`` recomputing every row of
    one bundle, whose arrays do not change meanwhile); outside it, every call computes."""
    token = _PASS.set({})
    try:
        yield
    finally:
        _PASS.reset(token)


def memoized(key: str, fn: Callable[[], _V]) -> _V:
    """``fn()`` once per ``key`` within a ``recompute_pass`` (what a stage's recompute hook
    derives from a bundle's arrays for many rows: a fixture's cond(M), an engine's terms):
    its value, or the exception it raised, again for every later row that asks with the
    same key; outside a pass, ``fn()``."""
    memo = _PASS.get()
    if memo is None:
        return fn()
    if key not in memo:
        try:
            memo[key] = (True, fn())
        except Exception as e:  # noqa: BLE001 - raised again to every row that asks
            memo[key] = (False, e)
    ok, value = memo[key]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]  # what fn returned for this key


def failure_text(stage: str, quantity: str, a: ArrayLike, b: ArrayLike, tol: Tolerance,
                 worst: int, labels: Labels | None = None,
                 floor: ArrayLike | None = None) -> str:
    """Why a finite comparison failed, from its worst sample: "|Δ| E UNIT at LABEL exceeds
    its bound B = atol A + rtol R × S" (S the larger max|·| of the two sides there). Every
    failed record carries it, so no failure is written without a reason."""
    a_w = np.asarray(a, dtype=float)[worst]
    b_w = np.asarray(b, dtype=float)[worst]
    err = float(np.abs(a_w - b_w).max(initial=0.0))
    scale = float(max(np.abs(a_w).max(initial=0.0), np.abs(b_w).max(initial=0.0)))
    unit = unit_of(stage, quantity)
    label = str(labels[worst]) if labels is not None else f"sample {worst}"
    atol = tol.atol if floor is None else float(np.asarray(floor, dtype=float)[worst])
    return (f"|Δ| {err:.3g}{' ' + unit if unit else ''} at {label} exceeds its bound "
            f"{atol + tol.rtol * scale:.3g} = atol {atol:g} + rtol {tol.rtol:g} × "
            f"{scale:.3g}")


def inform(rid: str, stage: str, fixture: str, quantity: str, engine_a: str, engine_b: str,
           a: ArrayLike, b: ArrayLike, key_a: str, key_b: str, labels: Labels | None = None,
           key_labels: str = "", reason: str = "") -> Record:
    """An ``informational`` record: the same numbers as ``compare`` (max_abs, max_rel,
    worst sample), no tolerance and no verdict (``passed`` None)."""
    abs_m, rel_m, worst, _ = measure(a, b, Tolerance(0.0, 0.0, ""))
    finite = math.isfinite(abs_m)
    max_abs, max_rel = _numbers(abs_m, rel_m)
    return Record(id=rid, stage=stage, fixture=fixture, quantity=quantity,
                  engine_a=engine_a, engine_b=engine_b, status="informational",
                  passed=None, max_abs=max_abs, max_rel=max_rel, atol=None, rtol=None,
                  n_samples=int(np.asarray(a).shape[0]), worst_sample=worst,
                  worst_label=str(labels[worst]) if labels is not None else f"sample {worst}",
                  key_a=key_a, key_b=key_b, key_labels=key_labels,
                  reason=reason if finite else (reason + "; non-finite values").strip("; "))


# ----- units and the text of a record's error ---------------------------------------------
# SI unit of max_abs per (stage, quantity); "a or b" when a quantity mixes coordinate kinds
# (translation or rotation). Contact quantities carry their unit as a name suffix (_mps ...).
_RIGID = "N or N·m"
UNITS: dict[tuple[str, str], str] = {
    ("model_identity", "total_mass"): "kg",
    ("model_identity", "group_inertia"): "kg, kg·m, kg·m²",
    ("model_identity", "body_inertia"): "kg, kg·m, kg·m²",
    ("model_identity", "mass_matrix_neutral"): "kg or kg·m or kg·m²",
    ("model_identity", "joint_axis"): "1 (unit vector)",
    ("model_identity", "joint_placement"): "m or 1 (rotation entries)",
    ("model_identity", "joint_limits"): "m or rad",
    ("model_identity", "joint_damping"): "N·s/m or N·m·s/rad",
    ("model_identity", "joint_friction"): _RIGID,
    ("model_identity", "joint_armature"): "kg or kg·m²",
    ("model_identity", "joint_spring"): "N/m or N·m/rad, m or rad",
    ("kinematics", "frame_pose"): "m or 1 (rotation entries)",
    ("kinematics", "frame_jacobian"): "m/s or rad/s per unit velocity",
    ("dynamics", "mass_matrix"): "kg or kg·m or kg·m²",
    ("dynamics", "bias_forces"): _RIGID,
    ("dynamics", "forward_dynamics"): "m/s² or rad/s²",
    ("dynamics", "inverse_dynamics"): _RIGID,
    ("constrained", "constraint_residual"): "m or rad",
    ("constrained", "constraint_velocity"): "m/s or rad/s",
    ("constrained", "constraint_acceleration"): "m/s² or rad/s²",
    ("constrained", "released_acceleration"): "1 (fraction of its bound)",
    ("constrained", "rollout_released_drift"): "m or rad, m/s or rad/s",
    ("constrained", "rollout_projection"): "m or rad, m/s or rad/s",
    ("constrained", "rollout_drift_none"): "m or rad, m/s or rad/s",
    ("constrained", "rollout_drift_baumgarte"): "m or rad, m/s or rad/s",
    ("constrained", "constrained_vdot"): "m/s² or rad/s²",
    ("constrained", "native_vdot"): "m/s² or rad/s²",
    ("constrained", "constraint_multipliers"): _RIGID,
    ("constrained", "native_lambda"): _RIGID,
    ("contact", "contact_force"): "N",
    ("contact", "generalized_contact_force"): _RIGID,
    ("contact", "contact_acceleration"): "m/s² or rad/s²",
    ("replay", "trajectory"): "m or rad, m/s or rad/s",
    ("replay", "refinement"): "m or rad, m/s or rad/s",
    ("replay", "native"): "m or rad, m/s or rad/s",
    ("replay", "energy_balance"): "J",
    ("replay", "convergence_order"): "1",
}
_SUFFIX_UNITS = (("_mps2", "m/s²"), ("_radps", "rad/s"), ("_mps", "m/s"), ("_Ns", "N·s"),
                 ("_N", "N"), ("_J", "J"), ("_m", "m"), ("_s", "s"))


@functools.cache  # a report asks for each of its thousands of rows (UNITS is constant)
def unit_of(stage: str, quantity: str) -> str:
    """SI unit of a record's max_abs (and atol), or "" when the table does not know it."""
    if (stage, quantity) in UNITS:
        return UNITS[(stage, quantity)]
    if (stage, quantity.split("/", 1)[0]) in UNITS:  # a tolerance class ("…/float32")
        return UNITS[(stage, quantity.split("/", 1)[0])]
    tail = quantity.rsplit(".", 1)[-1]
    for suffix, unit in _SUFFIX_UNITS:
        if tail.endswith(suffix):
            return unit
    return ""


def error_text(r: Record, digits: int = 2) -> str:
    """A record's own error as a reader should see it: the relative error where it is
    defined; the absolute error with its unit where it is not (a check against zero,
    "|Δ| 4.84e-15 m/s (against 0)"); "non-finite" for a compared row with non-finite
    values; "—" for a row without numbers."""
    if r.max_rel is not None:
        return f"{r.max_rel:.{digits}e}"
    if r.max_abs is not None:
        unit = unit_of(r.stage, r.quantity)
        return f"|Δ| {r.max_abs:.{digits}e}{' ' + unit if unit else ''} (against 0)"
    if r.status in ("failed", "unconverged", "informational") and r.key_a:
        return "non-finite"
    return "—"
