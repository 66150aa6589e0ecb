"""How ``harness verify`` recomputes a replay record from the bundle's arrays alone:
windows, gates and derived quantities (convergence orders, agreement horizons).
"""
from __future__ import annotations

import numpy as np

from harness.core.records import Record, compare
from harness.core.tolerances import Tolerance, lookup
from harness.model.integrators import ORDERS
from harness.stages.replay.cases import NAME, NATIVE, array_key, record_id
from harness.stages.replay.measures import (
    growth_rate,
    observed_orders,
    sample_errors,
    sweep_errors,
    window_length,
)


def _status_from_gate(rec: Record, gates: list, what: str = "") -> Record:
    """Turn a passed/failed record into 'unconverged' when a gate it depends on tripped:
    it is not scored against a run (or reference, ``what``) that is not converged."""
    tripped = [g for g in gates if g is not None and g.status == "unconverged"]
    if rec.status in ("passed", "failed") and tripped:
        rec.status, rec.passed = "unconverged", None
        rec.reason = _join(rec.reason, (f"no verdict: {what} " if what else "") +
                           "refinement gate tripped: " +
                           ", ".join(f"{g.id} ({_moved(g)})" for g in tripped))
    return rec


def _moved(g: Record) -> str:
    return "identical when refined" if g.max_abs is None or _IDENTICAL in g.reason \
        else f"moved by {g.max_abs:.2e}"


_IDENTICAL = "the refined run is bitwise identical"


def _gate(rec: Record, a, b) -> Record:
    """The refinement row: unconverged when the run moved by more than the tolerance, or
    when the refined run is bitwise identical to a run that moves (then it was no finer
    discretisation, and nothing bounds the run's error)."""
    if rec.status == "failed":
        rec.status, rec.passed = "unconverged", None
    elif rec.status == "passed" and a.shape[0] > 1 and np.array_equal(a, b) \
            and not np.array_equal(a, np.broadcast_to(a[:1], a.shape)):
        rec.status, rec.passed = "unconverged", None
        rec.reason = _join(rec.reason, f"{_IDENTICAL} to the run: not a finer "
                                       "discretisation, so nothing bounds its error")
    return rec


def _parse(r: Record):
    """(case, run, who) from a replay record id."""
    head, tail = r.id.split(f"/{NAME}/", 1)
    run, _, who = tail.split("/", 2)
    return head, run, who


def recompute_record(r: Record, arrays: dict, records_by_id: dict) -> Record:
    """The replay record ``r`` computed again from the arrays (its status included).

    Used when the record is made and by ``harness verify``; raises KeyError/ValueError if
    an array is missing or inconsistent."""
    case, run, who = _parse(r)
    labels_key = array_key(case, "labels")
    labels = arrays[labels_key]
    # a stored record is recomputed with its own tolerance (verify checks it against the
    # table); a new one takes the table's, of its class ("trajectory/float32")
    tol = lookup(NAME, r.quantity) if r.atol is None else Tolerance(r.atol, r.rtol, "")
    q = r.quantity.partition("/")[0]
    args = dict(rid=r.id, stage=NAME, fixture=r.fixture, quantity=r.quantity,
                engine_a=r.engine_a, engine_b=r.engine_b, tol=tol, key_a=r.key_a,
                key_b=r.key_b, key_labels=labels_key)
    if q == "refinement":
        b = arrays[r.key_b]
        n = b.shape[0]
        if run != NATIVE and n != window_length(arrays, case, run, who):
            raise ValueError(f"refined run of {who} has {n} knots, the window has "
                             f"{window_length(arrays, case, run, who)}")
        a = arrays[r.key_a][:n]
        out = compare(a=a, b=b, labels=labels[:n], **args)
        out.reason = _join(out.reason, f"moved by {out.max_abs:.2e} when refined"
                           if out.max_abs is not None else "")
        return _gate(out, np.asarray(a), np.asarray(b))
    if q == "trajectory":
        a_, b_ = r.engine_a, r.engine_b
        n = min(window_length(arrays, case, run, a_), window_length(arrays, case, run, b_))
        xa, xb = arrays[r.key_a], arrays[r.key_b]
        out = compare(a=xa[:n], b=xb[:n], labels=labels[:n], **args)
        t = arrays[array_key(case, "t")]
        err, bound = sample_errors(xa, xb, tol)
        hz = np.nonzero(err > bound)[0]
        lam, used = growth_rate(t, err)
        parts = []
        if n < t.size:
            parts.append(f"scored over the predictability window t < {t[n]:.3f} s "
                         f"({n} of {t.size} knots)")
        parts.append(f"agreement horizon {t[hz[0]]:.3f} s" if hz.size else
                     f"no horizon within {t[-1] - t[0]:.3f} s")
        if lam is not None:
            parts.append(f"log-error growth {lam:.3g} /s over {used} knots")
        out.reason = _join(out.reason, "; ".join(parts))
        gates = [records_by_id.get(record_id(case, r.fixture, run, "refinement", e))
                 for e in (a_, b_)]
        return _status_from_gate(out, gates, "a run of the pair is unconverged;")
    if q == "native":
        b = arrays[r.key_b]  # the refined harness run: as long as its window
        n = b.shape[0]
        out = compare(a=arrays[r.key_a][:n], b=b, labels=labels[:n], **args)
        ref_run = r.key_b.split("/")[2]
        out.reason = _join(out.reason, f"against {who}'s own {ref_run} refined harness run")
        gates = [records_by_id.get(record_id(case, r.fixture, NATIVE, "refinement", who)),
                 records_by_id.get(record_id(case, r.fixture, ref_run, "refinement", who))]
        return _status_from_gate(out, gates, "the native run or its reference (the refined "
                                             "harness run) is unconverged;")
    if q == "energy_balance":
        n = window_length(arrays, case, run, who)
        E, W = arrays[r.key_a][:n], arrays[r.key_b][:n]
        out = compare(a=E - E[0], b=W[:, 0] - W[:, 1], labels=labels[:n], **args)
        out.reason = _join(out.reason, f"E(t) − E(t0) against ∫τᵀv dt − ∫vᵀDv dt; "
                           f"dissipated {W[-1, 1]:.4g} J, applied {W[-1, 0]:.4g} J")
        gates = [records_by_id.get(record_id(case, r.fixture, run, "refinement", who))]
        return _status_from_gate(out, gates, "its run is unconverged;")
    if q == "convergence_order":
        pre = r.key_a[:-len("/h")]
        h = arrays[r.key_a]
        err = sweep_errors(arrays, pre, r.key_b)
        p = observed_orders(h, err)
        if p.size < 2:
            raise ValueError(f"{r.id}: a convergence sweep needs at least 3 levels")
        theory = float(ORDERS[run])
        lab = np.array([f"h = {h[-2]:.3g} s"])
        out = compare(a=np.array([p[-2]]), b=np.array([theory]), labels=lab, **args)
        out.worst_label = str(lab[0])
        out.key_labels = ""
        moved = abs(p[-1] - p[-2])
        gtol = lookup(NAME, "order_refinement")
        gate_ok = bool(np.isfinite(moved) and moved <= gtol.atol)
        out.reason = (f"observed order {p[-2]:.3f} (h {h[-3]:.3g}→{h[-2]:.3g} s), refined "
                      f"{p[-1]:.3f} (h→{h[-1]:.3g} s), theory {theory:g}; state errors "
                      f"{', '.join(f'{x:.2e}' for x in err)}")
        if not gate_ok and out.status in ("passed", "failed"):
            out.status, out.passed = "unconverged", None
            out.reason += f"; the order moved by {moved:.3f} when refined (gate {gtol.atol:g})"
        return out
    raise ValueError(f"{r.id}: no recomputation rule for replay quantity {q!r}")


def _join(a, b):
    return "; ".join(x for x in (a, b) if x)
