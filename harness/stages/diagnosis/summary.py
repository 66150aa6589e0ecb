"""The diagnosis read from stored records only: each difference's named causes and their
shares, the first differing element of stage 0 rows, the lines the CLI prints and the
report section.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.core.records import Record, measure
from harness.core.tolerances import Tolerance, lookup
from harness.stages.diagnosis.causes import ALL, AS_IS, NAIVE, NAME, QUANTITIES, UNITS, fmt_g


# ----- summary (from stored records and arrays only) --------------------------------------
def _share(before, after):
    if before is None or after is None or not before > 0:
        return None
    return 1.0 - after / before


def summarise(records: Sequence[Record],
              arrays: Mapping[str, NDArray[Any]]) -> list[dict[str, Any]]:
    """Per diagnosed model: its findings, each with the measured effect on every engine
    pair and quantity that differs as-is (share = 1 − after / before of the records'
    max_abs), its verdict ('explains' ≥ 1 − rtol of the table's explained_share,
    'contributes', 'no measured effect'), and what no cause explains."""
    thr = lookup(NAME, "explained_share")
    out = []
    fixtures = sorted({k.split("/")[1] for k in arrays if k.startswith("diag/")
                       and k.endswith("/findings")})
    by = {}
    for r in records:
        if r.stage == NAME:
            variant = r.id.rsplit("/", 1)[1]
            by[(r.fixture, r.quantity, r.engine_a, r.engine_b, variant)] = r
    for fx in fixtures:
        findings = [json.loads(s) for s in arrays[f"diag/{fx}/findings"] if s]
        diffs = [(q, a, b) for (f, q, a, b, v), r in by.items()
                 if f == fx and v == AS_IS and r.status == "failed"]
        diffs.sort(key=lambda t: (QUANTITIES.index(t[0]), t[1], t[2]))
        for fd in findings:
            effects = []
            v = fd["variant"]
            if v == NAIVE:
                for (f, q, a, b, vv), r in by.items():
                    if f == fx and vv == NAIVE and r.max_abs is not None:
                        base = by.get((fx, q, a, b, AS_IS))
                        after = base.max_abs if base is not None else None
                        effects.append({"quantity": q, "pair": f"{a}~{b}", "before": r.max_abs,
                                        "after": after, "share": _share(r.max_abs, after)})
            elif v:
                for q, a, b in diffs:
                    r0, r1 = by[(fx, q, a, b, AS_IS)], by.get((fx, q, a, b, v))
                    after = r1.max_abs if r1 is not None else None
                    effects.append({"quantity": q, "pair": f"{a}~{b}", "before": r0.max_abs,
                                    "after": after, "share": _share(r0.max_abs, after)})
            shares = [e["share"] for e in effects if e["share"] is not None]
            if not v and fd.get("structural"):
                verdict = "structure only: no effect on the dynamics"
            elif not v:
                verdict = "not measured (no ablation)"
            elif shares and max(shares) >= 1 - thr.atol:
                verdict = "explains"
            elif shares and max(shares) >= thr.atol:
                verdict = "contributes"
            elif v == NAIVE and "different lengths" in fd["evidence"]:
                verdict = "not measurable where the arrays have different lengths"
            else:
                verdict = "no measured effect"
            fd["effects"] = [e for e in effects if e["share"] is None or e["share"] >= thr.atol
                             or v == NAIVE]
            fd["verdict"] = verdict
        measured = [fd for fd in findings if fd["variant"] and fd["variant"] != NAIVE]
        unexplained = []
        for q, a, b in diffs:
            last = ALL if len(measured) > 1 else (measured[0]["variant"] if measured else None)
            r = by.get((fx, q, a, b, last)) if last else None
            if r is None or r.status != "passed":
                unexplained.append({"quantity": q, "pair": f"{a}~{b}",
                                    "before": by[(fx, q, a, b, AS_IS)].max_abs,
                                    "after": None if r is None else r.max_abs})
        together = []
        if len(measured) > 1:
            for q, a, b in diffs:
                r0, r1 = by[(fx, q, a, b, AS_IS)], by.get((fx, q, a, b, ALL))
                after = r1.max_abs if r1 is not None else None
                together.append({"quantity": q, "pair": f"{a}~{b}", "before": r0.max_abs,
                                 "after": after, "share": _share(r0.max_abs, after)})
        dofs = [str(d) for d in arrays.get(f"diag/{fx}/dofs", [])]
        where = {}
        for q, a, b in diffs:
            r = by[(fx, q, a, b, AS_IS)]
            where[f"{q}|{a}~{b}"] = _where(arrays[r.key_a], arrays[r.key_b], dofs)
        for fd in findings:
            for e in fd["effects"]:
                e["where"] = where.get(f"{e['quantity']}|{e['pair']}", "")
        rows = explain_rows(records, arrays, fx, findings, by, unexplained)
        out.append({"fixture": fx, "findings": findings, "differences": len(diffs),
                    "unexplained": unexplained, "together": together, "rows": rows,
                    "rows_unexplained": [x for x in rows if not x["causes"]],
                    "failed": [str(e) for e in arrays.get(f"diag/{fx}/failed", [])],
                    "notes": [str(n) for n in arrays.get(f"diag/{fx}/notes", [])],
                    "engines": [str(e) for e in arrays.get(f"diag/{fx}/engines", [])],
                    "causes": [fd for fd in findings if fd["verdict"] in ("explains",
                                                                          "contributes")],
                    "latent": [fd for fd in findings if fd["verdict"] not in (
                        "explains", "contributes")]})
    return out


# ----- every row of the bundle that differs, and the named cause behind it ---------------
_BAD = ("failed", "error", "not_scored", "unconverged")
_READBACK = {"joint_damping": "damping", "joint_friction": "friction",
             "joint_armature": "armature"}
_BODY = ("nonphysical", "fused", "geometry", "precision")
# stage-0..2 quantities whose engine-pair difference the diagnosis measures itself
_MEASURED = {"mass_matrix_neutral": "mass_matrix", "mass_matrix": "mass_matrix",
             "bias_forces": "bias_forces", "forward_dynamics": "forward_dynamics",
             "inverse_dynamics": "inverse_dynamics"}


def differing_labels(r: Record, arrays: Mapping[str, NDArray[Any]]) -> list[str]:
    """Labels of every row of a failed record's arrays that differs beyond the record's
    tolerance (all of them when the arrays are missing)."""
    if not (r.key_a in arrays and r.key_b in arrays and r.key_labels in arrays):
        return []
    a, b, labels = arrays[r.key_a], arrays[r.key_b], arrays[r.key_labels]
    tol = Tolerance(r.atol or 0.0, r.rtol or 0.0, "")
    return [str(labels[k]) for k in range(min(a.shape[0], len(labels)))
            if not measure(a[k:k + 1], b[k:k + 1], tol)[3]]


def _engines_of(r: Record) -> list[str]:
    """The engines a record compares (not the declared model)."""
    return [e for e in (r.engine_a, r.engine_b) if e and e != "declared"]


def _elements(label: str) -> list[str]:
    """The bodies a row label names: a group label "head (with b1, b2)" names them all."""
    head, _, rest = label.partition(" (with ")
    return [head] + [b for b in rest.rstrip(")").split(", ") if b]


@dataclass
class _RowCauses:
    """The named causes of the rows of one fixture ``fx``: its ``findings`` (with their
    measured effects), its diagnosis records ``by`` (fixture, quantity, engine a, engine b,
    variant) and the (quantity, pair) differences the causes leave unexplained (``left``)."""

    fx: str
    findings: list[dict]
    by: dict[tuple[str, str, str, str, str], Record]
    left: set[tuple[str, str]]
    arrays: Mapping[str, NDArray]

    def measured(self, q: str, pair: str) -> tuple[list[str], str]:
        """(titles, why) of the causes whose measured share of the diagnosis as-is row of
        quantity ``q`` and ``pair`` is ≥ the table's explained_share atol."""
        thr = lookup(NAME, "explained_share")
        r = self.by.get((self.fx, q, *pair.split("~"), AS_IS))
        if r is None or r.status != "failed":
            return [], (f"the diagnosis measured no {q} difference for {pair}" if r is not None
                        else f"the diagnosis has no {q} row for {pair}")
        if (q, pair) in self.left:
            return [], f"the named causes leave the {q} difference of {pair} unexplained"
        titles = [fd["title"] for fd in self.findings for e in fd.get("effects", ())
                  if fd["variant"] != NAIVE and e["quantity"] == q and e["pair"] == pair
                  and e["share"] is not None and e["share"] >= thr.atol]
        return list(dict.fromkeys(titles)), ("" if titles else
                                             f"no measured cause of the {q} difference")

    def found(self, causes: Sequence[str], r: Record, element: str | None = None) -> list[str]:
        """Titles of the findings of ``causes`` on an engine of ``r`` (naming ``element``)."""
        return [fd["title"] for fd in self.findings if fd["cause"] in causes
                and set(_engines_of(r)) & set(fd["engines"])
                and (element is None or element in fd["elements"])]

    def per_element(self, causes: Sequence[str], r: Record, labels: list[str],
                    elems: Callable[[str], list[str]] = _elements) -> tuple[list[str], str]:
        """(titles, why): the findings of ``causes`` covering every differing row label of
        ``r`` (through the elements ``elems`` names in it); none unless all are covered."""
        titles, missing = [], []
        for lab in labels:
            t = [x for e in elems(lab) for x in self.found(causes, r, e)]
            titles += t
            if not t:
                missing.append(lab)
        return (list(dict.fromkeys(titles)), "") if labels and not missing else \
            ([], f"no {' / '.join(causes)} finding covers {', '.join(missing) or 'the row'}")

    def behind(self, r: Record, earlier: list[Record],
               explained: dict[str, list[str]]) -> tuple[list[str], str]:
        """(titles, why) of a row not scored: the causes of the ``earlier`` rows that
        blocked it, if every one of them is ``explained`` {record id: titles}."""
        blockers = [x for x in earlier if x.stage != r.stage and x.status in
                    ("failed", "error") and (
                        (x.engine_a, x.engine_b) == (r.engine_a, r.engine_b)
                        or (x.engine_a in ("declared", "") or x.engine_b == "")
                        and set(_engines_of(x)) & {r.engine_a, r.engine_b})]
        if not blockers:
            return [], f"not scored: {r.reason}"
        if all(explained.get(x.id) for x in blockers):
            return list(dict.fromkeys(t for x in blockers for t in explained[x.id])), ""
        return [], "not scored behind an unexplained row: " + ", ".join(
            x.id for x in blockers if not explained.get(x.id))

    def of_row(self, r: Record, pair: str) -> tuple[list[str], str, list[str] | None]:
        """(titles, why, differing labels or None) of a row that failed or did not converge
        (not one that raised or went unscored), by its stage and quantity."""
        causes, why, labels = [], "", None
        if r.stage == NAME:
            causes, why = self.measured(r.quantity, pair)
        elif r.quantity in _MEASURED and "declared" not in pair:
            causes, why = self.measured(_MEASURED[r.quantity], pair)
        elif r.quantity in _READBACK:
            labels = differing_labels(r, self.arrays)
            causes, why = self.per_element((_READBACK[r.quantity],), r, labels,
                                           lambda lab: [lab])
        elif r.quantity == "body_inertia":
            labels = differing_labels(r, self.arrays)
            causes, why = self.per_element(_BODY, r, labels)
        elif r.quantity in ("total_mass", "group_inertia"):
            causes = self.found(("nonphysical", "geometry", "precision"), r) + [
                fd["title"] for fd in self.findings if fd["cause"] == "fused" and fd["variant"]
                and set(_engines_of(r)) & set(fd["engines"])]
            why = "" if causes else "no body finding on these engines"
        elif r.quantity in ("joint_axis", "joint_placement", "frame_pose", "frame_jacobian"):
            causes = self.found(("precision",), r)
            why = "" if causes else "no round-trip finding on these engines"
        else:
            why = f"no cause in the catalogue for {r.quantity}"
        return causes, why, labels

    def outside(self, r: Record, labels: list[str] | None) -> list[dict]:
        """The findings outside the catalogue ('other') on an engine of ``r`` (and on an
        element of its differing ``labels``, when it has them)."""
        return [fd for fd in self.findings if fd["cause"] == "other"
                and set(_engines_of(r)) & set(fd["engines"])
                and (labels is None or {e for lab in labels for e in _elements(lab)}
                     & set(fd["elements"]))]


def explain_rows(records: Sequence[Record], arrays: Mapping[str, NDArray], fx: str,
                 findings: list[dict], by: dict[tuple[str, str, str, str, str], Record],
                 unexplained: list[dict]) -> list[dict]:
    """Every row of fixture ``fx`` that failed, raised or went unscored — the diagnosis's
    as-is rows and the rows of the other stages — with the titles of the named causes
    behind it (``causes``; empty: unexplained, ``why`` says what is missing).

    * a diagnosis as-is row: the causes whose measured share of it is ≥ 1 %, unless the
      causes removed together leave it unexplained;
    * a stage row of M, h, v̇ or τ (stage 0's M at neutral included): the causes of the
      same engine pair's diagnosis row of that quantity;
    * a read-back row of damping, friction or armature: that cause, found in the read-back
      on the same joints; bodies, masses and group inertias: a fused-body, geometry or
      round-trip finding on the row's engine and bodies; joint frames and kinematics: a
      round-trip finding on the row's engine; anything else ("other"): unexplained;
    * a row that raised: unexplained (an engine or the harness failed);
    * a row not scored: the causes of the earlier rows that blocked it, if every one of
      them is explained."""
    ctx = _RowCauses(fx, findings, by, {(u["quantity"], u["pair"]) for u in unexplained},
                     arrays)
    rows, explained = [], {}
    mine = [r for r in records if r.fixture == fx]
    for i, r in enumerate(mine):
        if r.status not in _BAD:
            continue
        if r.stage == NAME and r.id.rsplit("/", 1)[1] != AS_IS:
            continue  # a measurement without a cause, not a difference of the model
        causes, why, labels = [], "", None
        pair = f"{r.engine_a}~{r.engine_b}"
        if r.status == "error":
            why = f"raised: {r.reason}"
        elif r.status == "not_scored":
            causes, why = ctx.behind(r, mine[:i], explained)
        else:
            causes, why, labels = ctx.of_row(r, pair)
        other = ctx.outside(r, labels)
        if other and r.status == "failed" and r.stage != NAME \
                and r.quantity not in _MEASURED:
            causes, why = [], f"outside the catalogue: {other[0]['evidence']}"
        explained[r.id] = causes
        rows.append({"id": r.id, "status": r.status, "stage": r.stage,
                     "quantity": r.quantity, "pair": pair, "causes": causes,
                     "why": "" if causes else (why or "unexplained")})
    return rows


def _where(a, b, dofs) -> str:
    """'state k, joint J' of the largest element difference (M: 'row J / column K')."""
    d = np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))
    if not d.size or not np.isfinite(d).all():
        return ""
    idx = np.unravel_index(int(np.argmax(d)), d.shape)
    name = lambda i: dofs[i] if i < len(dofs) else f"dof {i}"  # noqa: E731
    if len(idx) == 3:
        return f"state {idx[0]}, M[{name(idx[1])}, {name(idx[2])}]"
    return f"state {idx[0]}, {name(idx[1])}"


def first_differing(records: Sequence[Record],
                    arrays: Mapping[str, NDArray[Any]]) -> list[tuple[Record, str]]:
    """For every failed stage-0 record: the first element (in tree order) whose row
    differs beyond the record's tolerance, from the stored arrays — [(record, label)]."""
    out = []
    for r in records:
        if r.stage != "model_identity" or r.status != "failed" or not r.key_labels:
            continue
        a, b, labels = arrays[r.key_a], arrays[r.key_b], arrays[r.key_labels]
        tol = Tolerance(r.atol, r.rtol, "")
        for k in range(a.shape[0]):
            if not measure(a[k:k + 1], b[k:k + 1], tol)[3]:
                out.append((r, str(labels[k])))
                break
    return out


def format_summary(summary: dict) -> list:
    """Lines of text for the command line (``harness diagnose``)."""
    lines = [f"{summary['fixture']}: {summary['differences']} engine-pair difference(s) in "
             f"M, h, v̇ or τ as-is; engines {', '.join(summary['engines'])}"]
    for f in summary["failed"]:
        lines.append(f"  NOT LOADED {f}")
    if summary["causes"]:
        lines.append("  causes (measured by removing each alone):")
    for fd in summary["causes"]:
        comp = " (compensated: the harness converts)" if fd["variant"] == NAIVE else ""
        lines.append(f"  * {fd['title']} [{fd['verdict']}{comp}]: {fd['evidence']}")
        for e in fd["effects"]:
            if e["share"] is None:
                continue
            tail = ("  (unconverted → converted)" if fd["variant"] == NAIVE else
                    f"  largest at {e['where']}" if e.get("where") else "")
            removed = e["before"] - (e["after"] or 0.0)
            lines.append(f"      {e['pair']:22s} {e['quantity']:17s} {fmt_g(removed)} of "
                         f"{fmt_g(e['before'])} {UNITS[e['quantity']]} ({100 * e['share']:.1f} %)"
                         f"{tail}")
    if summary["latent"]:
        lines.append("  found in the read-back, no measured effect on these states:")
        for fd in summary["latent"]:
            lines.append(f"  - {fd['title']} [{fd['verdict']}]: {fd['evidence']}")
    stage_rows = [x for x in summary.get("rows", ()) if x["stage"] != NAME]
    if stage_rows:
        n = {st: sum(x["status"] == st for x in stage_rows) for st in _BAD}
        lines.append("  rows of stages 0-2 that differ: " + ", ".join(
            f"{k} {st.replace('_', ' ')}" for st, k in n.items() if k))
        groups = {}
        for x in stage_rows:
            if x["causes"]:
                groups.setdefault(tuple(x["causes"]), []).append(x)
        for causes, xs in groups.items():
            what = ", ".join(sorted({f"{x['quantity']} {x['status'].replace('_', ' ')}"
                                     for x in xs}))
            lines.append(f"      {len(xs):3d} explained by {' + '.join(causes)} ({what})")
        bad = [x for x in stage_rows if not x["causes"] and x["status"] != "not_scored"]
        for x in bad[:10]:
            lines.append(f"  NOT EXPLAINED {x['status'].replace('_', ' ')} {x['id']}: "
                         f"{x['why']}")
        if len(bad) > 10:
            lines.append(f"  NOT EXPLAINED: {len(bad) - 10} more such rows (see the report)")
        behind = [x for x in stage_rows if not x["causes"] and x["status"] == "not_scored"]
        if behind:
            lines.append(f"  NOT EXPLAINED: {len(behind)} row(s) not scored behind "
                         + ("the rows above" if bad else "an unexplained row")
                         + (f" ({behind[0]['why']})" if not bad else ""))
    if summary["unexplained"]:
        lines.append("  NOT explained by the named causes:")
        for u in summary["unexplained"]:
            before = "non-finite" if u["before"] is None else fmt_g(u["before"])
            lines.append(f"      {u['pair']:22s} {u['quantity']:17s} {before} "
                         f"{UNITS[u['quantity']]} as-is, "
                         f"{'—' if u['after'] is None else fmt_g(u['after'])} left")
    elif summary["differences"]:
        if summary["together"]:
            low = min(t["share"] for t in summary["together"] if t["share"] is not None)
            lines.append(f"  all named causes removed together: {100 * low:.1f} % of every "
                         "difference (the lowest share)")
    elif len(summary["engines"]) > 1:
        lines.append("  the engines agree on M, h, v̇ and τ for these states")
    if (summary["differences"] or stage_rows) and not summary["unexplained"] \
            and not summary.get("rows_unexplained") and not summary["failed"]:
        lines.append("  every difference is explained by the causes above")
    return lines


def is_explained(summary: dict) -> bool:
    """The diagnosis rule, in one place: a model's differences are explained when every
    difference and every row that failed, raised or went unscored has a named cause and
    every engine loaded the file (``harness diagnose`` exits 0 only then)."""
    return not (summary["unexplained"] or summary["failed"] or summary["rows_unexplained"])


def report_context(manifest: dict[str, Any], records: list[Record],
                   arrays: dict[str, NDArray[Any]] | None,
                   timings: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """'Why the engines disagree', computed from the bundle's records and arrays; [] when
    the bundle has no diagnosis."""
    if arrays is None or not any(k.startswith("diag/") for k in arrays):
        return []
    firsts = first_differing(records, arrays)
    out = []
    for s in summarise(records, arrays):
        s = dict(s)
        s["first"] = [{"quantity": r.quantity, "pair": f"{r.engine_a}~{r.engine_b}",
                       "element": label, "max_rel": r.max_rel,
                       "largest": r.worst_label if r.worst_label != label else ""}
                      for r, label in firsts if r.fixture == s["fixture"]]
        s["records"] = sorted((r for r in records if r.stage == NAME
                               and r.fixture == s["fixture"]), key=lambda r: r.id)
        s["explained"] = is_explained(s)
        out.append(s)
    return out
