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
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import numpy as np

from harness.core.tolerances import Tolerance

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

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "Record":
        names = {f.name for f in fields(cls)}
        unknown = set(d) - names
        missing = names - set(d)
        if unknown or missing:
            raise ValueError(f"record fields: unknown {sorted(unknown)}, missing {sorted(missing)}")
        for f in fields(cls):
            v, t = d[f.name], f.type
            ok = {"str": isinstance(v, str),
                  "bool | None": v is None or isinstance(v, bool),
                  "float | None": v is None or (isinstance(v, (int, float))
                                                and not isinstance(v, bool)),
                  "int": isinstance(v, int) and not isinstance(v, bool),
                  "int | None": v is None or (isinstance(v, int) and not isinstance(v, bool)),
                  }.get(t)
            if ok is None:
                raise ValueError(f"record field {f.name}: no type rule for {t}")
            if not ok:
                raise ValueError(f"record field {f.name} has the wrong type ({type(v).__name__})")
        r = cls(**d)
        if r.status not in STATUSES:
            raise ValueError(f"record {r.id}: unknown status {r.status!r}")
        return r


def measure(a: np.ndarray, b: np.ndarray, tol: Tolerance):
    """(max_abs, max_rel, worst sample index, passed) for arrays of shape (S, ...)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"shape mismatch {a.shape} vs {b.shape}")
    S = a.shape[0]
    if S == 0:
        raise ValueError("no samples")
    da = np.abs(a - b).reshape(S, -1)
    err = da.max(axis=1)
    scale = np.maximum(np.abs(a).reshape(S, -1).max(axis=1), np.abs(b).reshape(S, -1).max(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(scale > 0, err / np.where(scale > 0, scale, 1.0),
                       np.where(err > 0, np.inf, 0.0))
    finite = np.all(np.isfinite(a)) and np.all(np.isfinite(b))
    ok = err <= tol.atol + tol.rtol * scale
    passed = bool(finite and np.all(ok))
    # worst sample: the one furthest beyond its bound (by ratio err / bound)
    bound = tol.atol + tol.rtol * scale
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(bound > 0, err / np.where(bound > 0, bound, 1.0),
                         np.where(err > 0, np.inf, 0.0))
    ratio = np.where(np.isnan(ratio), np.inf, ratio)
    worst = int(np.argmax(ratio))
    max_abs = float(np.nanmax(err)) if finite else float("inf")
    max_rel = float(np.nanmax(rel)) if finite else float("inf")
    return max_abs, max_rel, worst, passed


def compare(rid, stage, fixture, quantity, engine_a, engine_b, a, b, tol, key_a, key_b,
            labels=None, key_labels="") -> Record:
    max_abs, max_rel, worst, passed = measure(a, b, tol)
    finite = np.isfinite(max_abs) and np.isfinite(max_rel)
    return Record(id=rid, stage=stage, fixture=fixture, quantity=quantity,
                  engine_a=engine_a, engine_b=engine_b,
                  status="passed" if passed else "failed", passed=passed,
                  max_abs=max_abs if finite else None, max_rel=max_rel if finite else None,
                  atol=tol.atol, rtol=tol.rtol,
                  n_samples=int(np.asarray(a).shape[0]), worst_sample=worst,
                  worst_label=str(labels[worst]) if labels is not None else f"sample {worst}",
                  key_a=key_a, key_b=key_b, key_labels=key_labels,
                  reason="" if finite else "non-finite values in an engine's output")


def inform(rid, stage, fixture, quantity, engine_a, engine_b, a, b, key_a, key_b,
           labels=None, key_labels="", reason="") -> Record:
    """An ``informational`` record: the same numbers as ``compare`` (max_abs, max_rel,
    worst sample), no tolerance and no verdict (``passed`` None)."""
    max_abs, max_rel, worst, _ = measure(a, b, Tolerance(0.0, 0.0, ""))
    finite = np.isfinite(max_abs) and np.isfinite(max_rel)
    return Record(id=rid, stage=stage, fixture=fixture, quantity=quantity,
                  engine_a=engine_a, engine_b=engine_b, status="informational",
                  passed=None, max_abs=max_abs if finite else None,
                  max_rel=max_rel if finite else None, atol=None, rtol=None,
                  n_samples=int(np.asarray(a).shape[0]), worst_sample=worst,
                  worst_label=str(labels[worst]) if labels is not None else f"sample {worst}",
                  key_a=key_a, key_b=key_b, key_labels=key_labels,
                  reason=reason if finite else (reason + "; non-finite values").strip("; "))
