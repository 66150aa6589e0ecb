"""Known engine disagreements as data (harness/core/known_disagreements.toml).

Each entry names the records it matches (stage, and optionally fixture, quantity,
engines, an id glob), the status such a record has (never ``passed``) and why. The
loader is strict: an unknown key, a missing or empty reason, an unknown status, a
duplicate name or a value of the wrong type is an error naming the entry.

``expected_status(record)`` gives (status, reason) for a listed record, None for any
other (which must pass). ``check(records)`` lists what disagrees with the file: a listed
record with another status (stale when it passed), a listed record whose own reason
lacks the entry's ``record_reason``, an unlisted record that did not pass, and (with
``complete``) an entry whose stage, fixture, quantity and engines all occur among the
records but which matches none of them. Records are ``Record`` objects or their JSON
dicts.
"""
from __future__ import annotations

import fnmatch
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.core.records import STATUSES, Record

# A record, or its JSON dict as read back from a bundle.
AnyRecord = Record | Mapping[str, Any]

PATH = Path(__file__).with_name("known_disagreements.toml")
_LISTS = ("stage", "fixture", "quantity", "engines")
_KEYS = {"name", *_LISTS, "id", "status", "reason", "record_reason"}
_REQUIRED = ("name", "stage", "status", "reason")
# a reason stands alone: no issue numbers, and every file it names is in the repository
_ISSUE = re.compile(r"\bissues?\s*#?\d|#\d", re.I)
_FILE = re.compile(r"[\w./-]+\.(?:md|py|toml|txt|json)\b")
_REPO = Path(__file__).resolve().parents[2]


def _cites_outside(reason: str) -> bool:
    """True when ``reason`` cites an issue number or names a file (by path or a name with
    a file suffix) that is not in this repository."""
    if _ISSUE.search(reason):
        return True
    return any(".." in f.split("/") or not (_REPO / f).exists()
               for f in _FILE.findall(reason))


@dataclass(frozen=True)
class Known:
    name: str
    stage: tuple[str, ...]
    status: str
    reason: str
    fixture: tuple[str, ...] | None = None
    quantity: tuple[str, ...] | None = None
    engines: tuple[str, ...] | None = None
    id: str | None = None
    record_reason: str | None = None

    def matches(self, record: AnyRecord) -> bool:
        if _get(record, "stage") not in self.stage:
            return False
        if self.fixture is not None and _get(record, "fixture") not in self.fixture:
            return False
        if self.quantity is not None and _get(record, "quantity") not in self.quantity:
            return False
        if self.engines is not None and len(_engines(record) & set(self.engines)) != 1:
            return False
        return self.id is None or fnmatch.fnmatchcase(_get(record, "id"), self.id)

    def in_scope(self, stages: set[str], fixtures: set[str], quantities: set[str],
                 engines: set[str]) -> bool:
        """Whether every key the entry gives occurs among a run's records."""
        return all(given is None or set(given) & have for given, have in (
            (self.stage, stages), (self.fixture, fixtures), (self.quantity, quantities),
            (self.engines, engines)))


def _get(record: AnyRecord, key: str) -> Any:
    return record[key] if isinstance(record, Mapping) else getattr(record, key)


def _engines(record: AnyRecord) -> set[str]:
    return {str(_get(record, k)).split(":")[0] for k in ("engine_a", "engine_b")} - {""}


def _strings(where: str, key: str, value: object) -> tuple[str, ...]:
    vals = (value,) if isinstance(value, str) else value
    if not isinstance(vals, list | tuple) or not vals or \
            not all(isinstance(v, str) and v.strip() for v in vals):
        raise ValueError(f"{where}: {key} must be a non-empty string or list of strings")
    if len(set(vals)) != len(vals):
        raise ValueError(f"{where}: {key} lists a value twice")
    return tuple(vals)


def _entry(where: str, d: object) -> Known:
    if not isinstance(d, dict):
        raise ValueError(f"{where}: not a table")
    unknown = sorted(set(d) - _KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}")
    missing = [k for k in _REQUIRED if k not in d]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(missing)}")
    for k in ("name", "status", "reason", "id", "record_reason"):
        if k in d and not (isinstance(d[k], str) and d[k].strip()):
            raise ValueError(f"{where}: {k} must be a non-empty string")
    where = f"{where} ({d['name']})"
    if not re.fullmatch(r"[a-z0-9_]+", d["name"]):
        raise ValueError(f"{where}: name must be a lower-case slug [a-z0-9_]")
    if d["status"] not in STATUSES or d["status"] == "passed":
        raise ValueError(f"{where}: status {d['status']!r} is not a non-passing status "
                         f"({', '.join(s for s in STATUSES if s != 'passed')})")
    if _cites_outside(d["reason"]):
        raise ValueError(f"{where}: the reason cites an issue number or a file outside the "
                         "repository; state the fact itself")
    if "engines" in d and isinstance(d["engines"], str):
        raise ValueError(f"{where}: engines must be a list")
    lists = {k: _strings(where, k, d[k]) for k in _LISTS if k in d}
    return Known(name=d["name"], status=d["status"], reason=" ".join(d["reason"].split()),
                 id=d.get("id"), record_reason=d.get("record_reason"), **lists)


def load(path: Path | str = PATH) -> tuple[Known, ...]:
    """All entries of the file, validated (ValueError naming the file and entry)."""
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: {e}") from None
    unknown = sorted(set(doc) - {"disagreement"})
    if unknown:
        raise ValueError(f"{path}: unknown top-level key(s) {', '.join(unknown)}")
    raw = doc.get("disagreement", [])
    if not isinstance(raw, list):
        raise ValueError(f"{path}: disagreement must be an array of tables")
    out = tuple(_entry(f"{path}: disagreement {i + 1}", d) for i, d in enumerate(raw))
    names = [k.name for k in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"{path}: duplicate name(s) {', '.join(dup)}")
    return out


@lru_cache(maxsize=1)
def entries() -> tuple[Known, ...]:
    return load(PATH)


def entry(name: str) -> Known:
    for k in entries():
        if k.name == name:
            return k
    raise KeyError(f"no known disagreement named {name!r} in {PATH.name}")


def _match(record: AnyRecord, table: Sequence[Known]) -> Known | None:
    hits = [k for k in table if k.matches(record)]
    if len(hits) > 1:
        raise ValueError(f"record {_get(record, 'id')} matches several known disagreements: "
                         f"{', '.join(k.name for k in hits)}")
    return hits[0] if hits else None


def expected_status(record: AnyRecord,
                    table: Sequence[Known] | None = None) -> tuple[str, str] | None:
    """(status, reason) of the known disagreement matching ``record``, None if unlisted
    (then the record must pass)."""
    k = _match(record, entries() if table is None else table)
    return None if k is None else (k.status, k.reason)


def check(records: Iterable[AnyRecord], complete: bool = True,
          table: Sequence[Known] | None = None) -> list[str]:
    """Problems of ``records`` against the known disagreements (empty: all as expected)."""
    table = entries() if table is None else table
    records = list(records)
    problems, used = [], set()
    for r in records:
        rid, status, why = _get(r, "id"), _get(r, "status"), _get(r, "reason")
        k = _match(r, table)
        if k is None:
            if status != "passed":
                problems.append(f"{rid}: {status} ({why or 'no reason'}), and not a known "
                                f"disagreement in {PATH.name}")
            continue
        used.add(k.name)
        if status == "passed":
            problems.append(f"{rid}: passed, but known disagreement {k.name!r} expects "
                            f"{k.status}: the entry is stale, remove it from {PATH.name}")
        elif status != k.status:
            problems.append(f"{rid}: {status} ({why or 'no reason'}), but known "
                            f"disagreement {k.name!r} expects {k.status}")
        elif k.record_reason is not None and k.record_reason not in (why or ""):
            problems.append(f"{rid}: {status} for another reason than known disagreement "
                            f"{k.name!r} states (its reason lacks {k.record_reason!r}): "
                            f"{why!r}")
    if complete:
        stages, fixtures, quantities = ({_get(r, key) for r in records}
                                         for key in ("stage", "fixture", "quantity"))
        engines = set().union(*(_engines(r) for r in records)) if records else set()
        for k in table:
            if k.name not in used and k.in_scope(stages, fixtures, quantities, engines):
                problems.append(f"known disagreement {k.name!r} matches no record of this "
                                f"run: stale (or its record was renamed), fix {PATH.name}")
    return problems
