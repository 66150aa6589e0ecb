"""JUnit XML for CI dashboards: one test case per record of a bundle.

Mapping (a record that does not pass is never reported as a passing test):
  passed                         → test case without children
  failed / error                 → <failure> / <error> with max_rel, tolerance, reason
  not_scored / unconverged       → <failure> (qualification fails on them)
  not_provided                   → <skipped> with the engine's reason (a documented
                                   capability gap; it does not fail qualification)
  unavailable engine             → a test case "engine <name> available" with <skipped>
                                   (a bundle lists only engines the user allowed to be
                                   missing with --allow-missing; otherwise the run exits 2)
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

from harness.core.io import write_bytes_atomic
from harness.core.records import Record


def _detail(r: Record) -> str:
    parts: list[str] = []
    if r.max_rel is not None and r.atol is None:  # informational (stage 3): no tolerance
        parts.append(f"max_abs {r.max_abs:.3e}, max_rel {r.max_rel:.3e}; worst: "
                     f"{r.worst_label}")
    elif r.max_rel is not None:
        parts.append(f"max_abs {r.max_abs:.3e}, max_rel {r.max_rel:.3e} "
                     f"(atol {r.atol:g}, rtol {r.rtol:g}); worst: {r.worst_label}")
    elif r.max_abs is not None:  # a check against zero: its relative error is undefined
        parts.append(f"max_abs {r.max_abs:.3e} against 0 (no relative error"
                     + (f"; atol {r.atol:g}" if r.atol is not None else "")
                     + f"); worst: {r.worst_label}")
    if r.reason:
        parts.append(r.reason)
    return "; ".join(parts) or r.status


def to_junit(records: Iterable[Record], unavailable: Mapping[str, str],
             name: str = "harness") -> bytes:
    """The JUnit XML document (UTF-8) of ``records``, one test case each, and of the
    ``unavailable`` engines {engine: why}."""
    suites: defaultdict[str, list[Record]] = defaultdict(list)
    for r in records:
        suites[f"{r.stage}.{r.fixture}"].append(r)
    root = ET.Element("testsuites", name=name)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite_name, recs in sorted(suites.items()):
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        suite = ET.SubElement(root, "testsuite", name=suite_name)
        for r in recs:
            case = ET.SubElement(suite, "testcase", classname=suite_name, name=r.id)
            counts["tests"] += 1
            if r.status == "passed":
                continue
            if r.status == "not_provided":
                ET.SubElement(case, "skipped", message=_detail(r))
                counts["skipped"] += 1
            elif r.status == "informational":  # stage 3: measured, no verdict
                ET.SubElement(case, "skipped", message=f"informational (no verdict): "
                                                       f"{_detail(r)}")
                counts["skipped"] += 1
            elif r.status == "error":
                ET.SubElement(case, "error", message=_detail(r), type=r.status)
                counts["errors"] += 1
            else:  # failed, not_scored, unconverged, and anything new: never a pass
                ET.SubElement(case, "failure", message=_detail(r), type=r.status)
                counts["failures"] += 1
        for k, v in counts.items():
            suite.set(k, str(v))
            totals[k] += v
    if unavailable:
        suite = ET.SubElement(root, "testsuite", name="engines")
        for eng, why in sorted(unavailable.items()):
            case = ET.SubElement(suite, "testcase", classname="engines",
                                 name=f"engine {eng} available")
            ET.SubElement(case, "skipped", message=why)
        suite.set("tests", str(len(unavailable)))
        suite.set("skipped", str(len(unavailable)))
        totals["tests"] += len(unavailable)
        totals["skipped"] += len(unavailable)
    for k, v in totals.items():
        root.set(k, str(v))
    doc: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return doc


def write_junit(path: str | os.PathLike[str], records: Iterable[Record],
                unavailable: Mapping[str, str]) -> Path:
    """Write atomically (temp file + rename, harness/core/io.py): nothing is left behind
    if it fails."""
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    return write_bytes_atomic(dest, to_junit(records, unavailable))
