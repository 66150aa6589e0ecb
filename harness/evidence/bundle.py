"""Evidence bundles: a folder with manifest.json, arrays.npz, records.json, index.html.

* manifest.json — schema version, harness version, git commit, engine versions (and
  the reasons of unavailable engines), fixtures (source, sha256, nq, nv, frames, joints,
  which engine API computed each quantity), sha256 of every array, tolerance-table
  version and the entries used, platform, command line, seed, samples, creation time.
* arrays.npz — every input and output a record was computed from (no pickles:
  numeric and unicode arrays only; loaded with ``allow_pickle=False``).
* records.json — list of records (harness/core/records.py), one per comparison.
* records.csv — the same records as a table (``records_csv``); a reader checks it
  against records.json when present (bundles written before it have none).
* manifest stage sections — one object per stage that declares a ``manifest_key``
  (harness/stages/base.py): what that stage ran, validated by the stage's own check
  (``Hooks.sections``); ``{}`` when the run did not use the stage. This module names no
  stage: what it knows of them comes through ``Hooks``.

One schema, validated strictly on read: unknown or missing fields are errors. Writes
are atomic: the bundle is built in a temporary sibling folder and swapped in with one
rename (an existing bundle is exchanged atomically with ``renameat2(RENAME_EXCHANGE)``
on Linux, then deleted), so a reader sees the old bundle or the new one, never a mix.
``verify`` recomputes every record from the arrays and reports any difference; it also
checks the rows against the run's plan (fixtures, engines, samples, gating) and the
manifest's tolerances against the table, so a bundle cannot be laundered by editing its
files and updating their hashes. Files are read bounded (harness/core/strict.py):
arrays.npz is hashed before it is decompressed.
"""
from __future__ import annotations

import hashlib
import json
import operator
import platform
import re
import subprocess
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from os import PathLike
from pathlib import Path
from typing import Any, NoReturn, Protocol, cast

import numpy as np
from numpy.typing import NDArray

from harness.core import figures
from harness.core.errors import BadInput
from harness.core.io import OutputKind, SameAs, array_sha256, npz_bytes, write_folder_atomic
from harness.core.records import Record, compare, compare_each, inform, recompute_pass
from harness.core.strict import (
    MAX_JSON_BYTES,
    MAX_NPZ_FILE_BYTES,
    holds_warnings,
    is_int,
    loads_json,
    npz_arrays,
    read_json,
    read_regular,
    sha256_bytes,
)
from harness.core.tolerances import TABLE, TABLE_VERSION, Tolerance
from harness.core.verdict import DECLARED, block_on, blocked_why
from harness.core.version import __version__

SCHEMA_VERSION = 2  # 2: the first stage section (stage 5's) in the manifest
# the manifest's own fields; a stage with a manifest section adds one object-valued field
# under its ``manifest_key`` (``Hooks.sections``)
MANIFEST_TYPES = {"schema_version": int, "harness_version": str, "git_commit": str,
                  "engines": dict, "unavailable_engines": dict, "fixtures": list,
                  "arrays_sha256": dict, "records_sha256": str,
                  "tolerance_table_version": str, "tolerances": dict, "platform": dict,
                  "command_line": list, "seed": int, "samples": int, "created": str,
                  "kind": str, "arrays_file_sha256": str, "manifest_sha256": str}
MANIFEST_KEYS = set(MANIFEST_TYPES)
FIXTURE_KEYS = {"name", "source", "digest", "nq", "nv", "floating", "frames", "joints",
                "provides", "notes"}

# a manifest or one of its objects, as JSON gives it (values of any JSON type)
Json = dict[str, Any]
# a bundle's arrays by name (numeric or unicode; arrays.npz)
Arrays = dict[str, NDArray[Any]]


class FixtureRow(Protocol):
    """What the manifest records of one fixture of a run (the runner's FixtureRun)."""

    name: str
    source: str
    digest: str
    nq: int
    nv: int
    floating: bool
    frames: list[str]
    joints: list[str]
    provides: dict[str, dict[str, str]]  # engine -> {quantity: api}
    notes: list[str]
    # engine -> {device, kernel_cache, compile_s, run_s, …}: engines that run on a device
    runtime: dict[str, dict[str, Any]]


class StageQuantity(Protocol):
    """What ``verify`` reads of a sampled stage's quantity (harness/stages/base.py
    Quantity): its name, the capability it needs, whether it has a declared value and a
    per-engine reference (and that reference's name)."""

    @property
    def name(self) -> str: ...
    @property
    def needs(self) -> str: ...
    @property
    def declared(self) -> Callable[..., Any] | None: ...
    @property
    def reference(self) -> Callable[..., Any] | None: ...
    @property
    def reference_name(self) -> str: ...


class SampledStage(Protocol):
    """What ``verify`` reads of a sampled stage (harness/stages/base.py Stage, a layer this
    one may not import): its name, quantities, own runner and ``applies`` rule."""

    @property
    def name(self) -> str: ...
    @property
    def quantities(self) -> Sequence[StageQuantity]: ...
    @property
    def run(self) -> Callable[..., Any] | None: ...
    @property
    def applies(self) -> Callable[..., Any] | None: ...


class RunSummary(Protocol):
    """What a bundle is written from (the runner's RunResult, other stages' rows added)."""

    records: list[Record]
    arrays: Arrays
    fixtures: list[FixtureRow]
    engines: list[tuple[str, str]]  # (name, version)
    samples: int
    seed: int


def _recognise(path: Path) -> None:
    """BadInput unless ``path`` is a manifest.json of this schema with its own seal intact
    (the output-folder rule, harness/core/io.py: only such a bundle may be replaced)."""
    m = read_json(path, "bundle manifest (JSON)")
    _check_manifest(path, m, Hooks())
    if manifest_digest(m) != m["manifest_sha256"]:
        raise BadInput(str(path), "manifest_sha256 differs: the manifest was edited")


# what a bundle folder may hold (timings.json: the replay stage's wall times, not evidence;
# records.csv: records.json as a table, checked against it when read; plotly.min.js: the
# chart library index.html loads from its own folder)
OUTPUT = OutputKind("an evidence bundle", "manifest.json", _recognise,
                    frozenset({"manifest.json", "arrays.npz", "records.json", "index.html",
                               "timings.json", "records.csv", figures.ASSET}))


@dataclass(frozen=True)
class Hooks:
    """What the stages lend the evidence layer, which imports no stage (the composition root
    builds this from harness.stages.STAGES).

    recompute: {stage: (record, arrays, records_by_id) -> Record} for rows whose verdict is
    more than a comparison of two arrays (``verify`` calls them within one
    ``records.recompute_pass``: a hook may derive a value once for many rows,
    ``memoized``); sections: {manifest key: (section) -> problem or ""}, the strict check
    of a stage's manifest section; thresholds: {manifest key: the table keys (stage,
    quantity) the section uses (recorded in the manifest)}; stages: the sampled stages in
    the runner's order (objects with ``name``, ``quantities``, ``run``, ``applies``), from
    which ``verify`` derives the rows a run must hold; reason_stated: the stages whose
    rows' reasons state a law rather than a computed value (``verify`` keeps them when it
    recomputes a row); compared_plainly: {stage: (record, arrays) -> whether its recompute
    hook computes that row as ``compare`` of its two arrays alone} (``verify`` measures
    those rows with the rows of stages without a hook, stacked, and judges them as the
    hook's).

    Without hooks (recognising a folder before replacing it) a stage section is any field
    beyond the manifest's own whose value is an object."""

    recompute: dict[str, Callable[[Record, Arrays, dict[str, Record]], Record]] = \
        field(default_factory=dict)
    sections: dict[str, Callable[[Json], str]] = field(default_factory=dict)
    thresholds: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    stages: tuple[SampledStage, ...] = ()
    reason_stated: frozenset[str] = frozenset()
    compared_plainly: dict[str, Callable[[Record, Arrays], bool]] = \
        field(default_factory=dict)


def git_commit() -> str:
    root = Path(__file__).resolve().parent.parent
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                             capture_output=True, text=True, timeout=5)
        return out.stdout.strip() if out.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def records_csv(records: Iterable[Record]) -> bytes:
    """records.json as CSV (one row per record, the Record fields as columns, in
    records.json's order; numbers as Python's repr, None as an empty cell)."""
    import csv
    import io

    names = [f.name for f in fields(Record)]
    values = operator.attrgetter(*names)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names)
    w.writerows(["" if v is None else v for v in values(r)] for r in records)
    return buf.getvalue().encode()


def _records_blob(records: Iterable[Record]) -> bytes:
    return json.dumps([r.to_json() for r in records], indent=1, allow_nan=False).encode()


def build_manifest(result: RunSummary, unavailable: Mapping[str, str],
                   command_line: Sequence[str], hooks: Hooks,
                   sections: Mapping[str, Json | None] | None = None,
                   command: str = "parity") -> Json:
    """``sections``: {manifest key: the stage's section} of the stages that wrote one
    (``hooks.sections`` lists every key; a key without a section is written as {});
    ``command``: the run's kind, the first word of ``kind`` ("parity", or "diagnose" for a
    run whose verdict follows the diagnosis rule, whether the command line or the Python
    API made it: a re-rendered page follows the same rule)."""
    sections = {k: dict((sections or {}).get(k) or {}) for k in hooks.sections}
    used = tolerances_used(result.records, sections, hooks)
    manifest: Json = {
        "schema_version": SCHEMA_VERSION,
        "kind": "+".join([command] + [k for k, v in sections.items() if v]),
        **sections,
        "harness_version": __version__,
        "git_commit": git_commit(),
        "engines": {n: v for n, v in result.engines},
        "unavailable_engines": dict(unavailable),
        "fixtures": [{"name": f.name, "source": f.source, "digest": f.digest, "nq": f.nq,
                      "nv": f.nv, "floating": f.floating, "frames": f.frames,
                      "joints": f.joints, "provides": f.provides, "notes": f.notes,
                      **({"runtime": f.runtime} if getattr(f, "runtime", None) else {})}
                     for f in result.fixtures],
        "arrays_sha256": {k: array_sha256(v) for k, v in sorted(result.arrays.items())},
        "records_sha256": hashlib.sha256(_records_blob(result.records)).hexdigest(),
        "arrays_file_sha256": hashlib.sha256(npz_bytes(result.arrays)).hexdigest(),
        "tolerance_table_version": TABLE_VERSION,
        "tolerances": {f"{s}/{q}": {"atol": TABLE[(s, q)].atol, "rtol": TABLE[(s, q)].rtol,
                                    "reason": TABLE[(s, q)].reason} for s, q in used},
        "platform": {"python": platform.python_version(), "machine": platform.machine(),
                     "system": platform.system(), "release": platform.release()},
        "command_line": list(command_line),
        "seed": result.seed,
        "samples": result.samples,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    manifest["manifest_sha256"] = manifest_digest(manifest)
    return manifest


def manifest_digest(manifest: Mapping[str, Any]) -> str:
    """sha256 of the manifest's canonical JSON without this field: any later edit of the
    manifest (an engine version, a tolerance, the seed) is detectable."""
    body = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"),
                                     allow_nan=False).encode()).hexdigest()


def write_bundle(out: str | PathLike[str], result: RunSummary, unavailable: Mapping[str, str],
                 command_line: Sequence[str], hooks: Hooks, html: str | None = None,
                 extra_files: Mapping[str, bytes] | None = None,
                 sections: Mapping[str, Json | None] | None = None,
                 manifest: Json | None = None) -> Path:
    """The bundle folder, written atomically; ``manifest`` if already built (the report
    needs it first), else built here (``sections``: as for ``build_manifest``)."""
    if manifest is None:
        manifest = build_manifest(result, unavailable, command_line, hooks, sections)
    files: dict[str, bytes | SameAs]
    files = {"manifest.json": json.dumps(manifest, indent=1, allow_nan=False).encode(),
             "arrays.npz": npz_bytes(result.arrays),
             "records.json": _records_blob(result.records),
             "records.csv": records_csv(result.records)}
    arrays_npz = cast(bytes, files["arrays.npz"])  # bytes: npz_bytes just above
    if hashlib.sha256(arrays_npz).hexdigest() != manifest["arrays_file_sha256"]:
        raise RuntimeError("arrays.npz is not deterministic")  # would be a harness bug
    if html is not None:
        files["index.html"] = html.encode()
        files[figures.ASSET] = figures.plotly_asset()  # the report's charts load it from here
    files.update(extra_files or {})
    return write_folder_atomic(Path(out), files, OUTPUT)


# ----- strict read ----------------------------------------------------------------------
class Bundle:
    """A bundle as read: ``arrays`` None when arrays.npz differs from its manifest (``verify``
    does not decompress it)."""

    def __init__(self, path: Path, manifest: Json, records: list[Record],
                 arrays: Arrays | None) -> None:
        self.path, self.manifest, self.records, self.arrays = path, manifest, records, arrays


@holds_warnings
def read_bundle(path: str | PathLike[str], hooks: Hooks) -> Bundle:
    """The bundle at ``path``, read and validated strictly: BadInput on anything malformed
    and on any file that differs from the manifest's hashes (``verify`` reports those as
    mismatches instead)."""
    return _read(Path(path), hooks, None)


def _read(path: Path, hooks: Hooks, problems: list[str] | None) -> Bundle:
    """``problems`` None: strict (read_bundle). A list: a file whose hash differs from the
    manifest is a problem appended to it, not an error; a tampered arrays.npz is then not
    decompressed (``arrays`` None)."""
    def differs(where: str, what: str) -> None:
        if problems is None:
            raise BadInput(where, what)
        problems.append(f"{Path(where).name}: {what}")

    if not path.is_dir():
        raise BadInput(str(path), "is not a bundle folder")
    for name in ("manifest.json", "records.json", "arrays.npz"):
        if not (path / name).exists():
            raise BadInput(str(path), f"missing {name}")
    mpath = path / "manifest.json"
    manifest = read_json(mpath, "bundle manifest (JSON)")
    _check_manifest(mpath, manifest, hooks)
    try:
        digest = manifest_digest(manifest)
    except (TypeError, ValueError) as e:
        raise BadInput(str(mpath), f"not canonical JSON ({e})")
    if digest != manifest["manifest_sha256"]:
        differs(str(mpath), "manifest_sha256 differs: the manifest was edited after it was "
                            "written")
    rpath = path / "records.json"
    raw = read_regular(rpath, "a records file", MAX_JSON_BYTES)
    rows = loads_json(raw, str(rpath), "records JSON")
    try:
        if not isinstance(rows, list):
            raise ValueError("records.json must hold a list")
        records = [Record.from_json(r) if isinstance(r, dict) else _bad_row(r) for r in rows]
    except (ValueError, TypeError) as e:
        raise BadInput(str(rpath), str(e))
    if sha256_bytes(raw) != manifest["records_sha256"]:
        differs(str(rpath), "sha256 differs from the manifest: the records were edited "
                            "after they were written")
    cpath = path / "records.csv"  # optional (a derived table); when present, it must agree
    if cpath.exists() and read_regular(cpath, "a records table", MAX_JSON_BYTES) \
            != records_csv(records):
        differs(str(cpath), "differs from records.json (edited after it was written)")
    apath = path / "arrays.npz"
    blob = read_regular(apath, "an arrays archive", MAX_NPZ_FILE_BYTES)
    if sha256_bytes(blob) != manifest["arrays_file_sha256"]:  # before decompressing it
        differs(str(apath), "file sha256 differs from the manifest (changed after it was "
                            "written); not decompressed")
        return Bundle(path, manifest, records, None)
    arrays = npz_arrays(blob, str(apath))
    if set(arrays) != set(manifest["arrays_sha256"]):
        raise BadInput(str(apath), "array names differ from the manifest")
    return Bundle(path, manifest, records, arrays)


def _bad_row(r: object) -> NoReturn:
    raise ValueError(f"record is not an object: {str(r)[:40]!r}")


def _number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _check_manifest(where: str | Path, m: object, hooks: Hooks) -> None:
    """The manifest's structure (types of every field, nested ones included). Its hash is
    checked by the caller."""
    if not isinstance(m, dict):
        raise BadInput(str(where), "manifest must be an object")
    own = set(hooks.sections) if hooks.sections else \
        {k for k in set(m) - MANIFEST_KEYS if isinstance(m[k], dict)}
    unknown, missing = set(m) - MANIFEST_KEYS - own, (MANIFEST_KEYS | own) - set(m)
    if unknown or missing:
        raise BadInput(str(where), f"unknown fields {sorted(unknown)}, missing {sorted(missing)}")
    for k, t in [*MANIFEST_TYPES.items(), *((k, dict) for k in sorted(own))]:
        if not isinstance(m[k], t) or (t is int and isinstance(m[k], bool)):
            raise BadInput(str(where), f"field {k} must be {t.__name__}")
    if m["schema_version"] != SCHEMA_VERSION:
        raise BadInput(str(where), f"schema version {m['schema_version']!r}, this harness "
                                   f"reads {SCHEMA_VERSION}")
    fixture_types = {"name": str, "source": str, "digest": str, "nq": int, "nv": int,
                     "floating": bool, "frames": list, "joints": list, "provides": dict,
                     "notes": list}
    for f in m["fixtures"]:
        # "runtime" (an engine's device, kernel cache and compile time) is optional
        if not isinstance(f, dict) or set(f) - {"runtime"} != FIXTURE_KEYS or \
                not isinstance(f.get("runtime", {}), dict):
            raise BadInput(str(where), "fixtures entries have unknown or missing fields")
        for k, t in fixture_types.items():
            if not isinstance(f[k], t) or (t is int and not is_int(f[k])):
                raise BadInput(str(where), f"fixture field {k} must be {t.__name__}")
        if not all(isinstance(x, str) for x in f["frames"] + f["joints"] + f["notes"]) or \
                not all(isinstance(v, dict) for v in f["provides"].values()):
            raise BadInput(str(where), f"fixture {f['name']}: frames, joints and notes must "
                                       "be strings, provides objects")
    names = [f["name"] for f in m["fixtures"]]
    if len(set(names)) != len(names):
        raise BadInput(str(where), "two fixtures have the same name")
    if not all(isinstance(v, str) for v in m["arrays_sha256"].values()):
        raise BadInput(str(where), "arrays_sha256 values must be strings")
    if not all(isinstance(v, str) for v in m["engines"].values()):
        raise BadInput(str(where), "engines values must be version strings")
    for k, e in m["tolerances"].items():
        if not (isinstance(e, dict) and set(e) == {"atol", "rtol", "reason"}
                and _number(e["atol"]) and _number(e["rtol"]) and isinstance(e["reason"], str)):
            raise BadInput(str(where), f"tolerances entry {k!r} must be {{atol, rtol, reason}}")
    for key, check in hooks.sections.items():
        if m.get(key):
            problem = check(m[key])
            if problem:
                raise BadInput(str(where), f"{key} section: {problem}")


# ----- verify ---------------------------------------------------------------------------
def verify(path: str | PathLike[str], hooks: Hooks) -> list[str]:
    """Recompute every record of a bundle and check the bundle against itself; return a
    list of one-line problems (empty if the bundle is consistent). Raises BadInput only if
    the bundle cannot be read (a file missing or malformed); an edited manifest, records or
    arrays file is a problem in the list.

    Checked: the hash of every file and array; every row whose arrays are in the bundle is
    recomputed, whatever status it claims; the rows of the sampled stages are the rows the
    run's fixtures, engines and gating imply (none missing, none added, ``not_scored``
    exactly where an earlier stage failed, with that reason); sample counts and labels; the
    manifest's tolerance entries and every row's tolerance against the table."""
    with warnings.catch_warnings():  # numpy on hostile numbers: the problems say it all
        warnings.simplefilter("ignore")
        return _verify(Path(path), hooks)


def verify_read(b: Bundle, hooks: Hooks) -> list[str]:
    """``verify``'s problems for a bundle already read strictly (``read_bundle``: its files
    match the manifest's hashes, or it would not have been read), from that bundle without
    reading its files again: the same checks on the same bytes (``harness report``
    verifies the very bundle it renders)."""
    with warnings.catch_warnings():  # numpy on hostile numbers: the problems say it all
        warnings.simplefilter("ignore")
        return _check(b, hooks, [])


def _verify(path: Path, hooks: Hooks) -> list[str]:
    problems: list[str] = []
    return _check(_read(path, hooks, problems), hooks, problems)


def _check(b: Bundle, hooks: Hooks, problems: list[str]) -> list[str]:
    """The checks of ``verify`` after the read (``problems``: those the read found)."""
    if b.arrays is None:
        problems.append(f"{len(b.records)} records not recomputed: arrays.npz does not "
                        "match its manifest")
        return problems
    for k, a in b.arrays.items():
        if array_sha256(a) != b.manifest["arrays_sha256"][k]:
            users = [r.id for r in b.records if k in (r.key_a, r.key_b, r.key_labels)]
            problems.append(f"array {k}: sha256 differs from the manifest (used by "
                            f"{', '.join(users) if users else 'no record'})")
    ids = [r.id for r in b.records]
    if len(set(ids)) != len(ids):
        problems.append("duplicate record ids")
    problems += _tolerance_problems(b.manifest, b.records, hooks)
    with recompute_pass():  # the hooks derive what many rows share once (the same arrays)
        problems += _record_problems(b, hooks)
    problems += _plan_problems(b.manifest, b.records, b.arrays, hooks)
    return problems


def tolerances_used(records: Iterable[Record], sections: Mapping[str, Json | None],
                    hooks: Hooks) -> list[tuple[str, str]]:
    """Sorted (stage, quantity) table keys a bundle's manifest lists: those of its records,
    and the thresholds of every stage section it holds (``sections``: {manifest key:
    section})."""
    used = {(r.stage, r.quantity) for r in records if (r.stage, r.quantity) in TABLE}
    for key, section in sections.items():
        if section:
            used |= set(hooks.thresholds.get(key, ()))
    return sorted(used)


def _tolerance_problems(manifest: Json, records: Sequence[Record], hooks: Hooks) -> list[str]:
    """The manifest's tolerance entries against the table: the same keys as the records
    use, the same atol and rtol (and, for the same table version, the same reason)."""
    out: list[str] = []
    same_version = manifest["tolerance_table_version"] == TABLE_VERSION
    listed = manifest["tolerances"]
    want = {f"{s}/{q}": TABLE[(s, q)] for s, q in
            tolerances_used(records, {k: manifest[k] for k in hooks.sections}, hooks)}
    for k in sorted(set(listed) - set(want)):
        out.append(f"manifest tolerances: entry {k} is used by no record")
    for k in sorted(set(want) - set(listed)):
        out.append(f"manifest tolerances: entry {k} used by the records is missing")
    for k in sorted(set(want) & set(listed)):
        e, t = listed[k], want[k]
        if (e["atol"], e["rtol"]) != (t.atol, t.rtol):
            out.append(f"manifest tolerance {k}: atol {e['atol']!r}, rtol {e['rtol']!r}; "
                       f"table {TABLE_VERSION} has atol {t.atol!r}, rtol {t.rtol!r}")
        elif same_version and e["reason"] != t.reason:
            out.append(f"manifest tolerance {k}: reason differs from table {TABLE_VERSION}")
    return out


def _record_problems(b: Bundle, hooks: Hooks) -> list[str]:
    """Every row recomputed from its arrays (whatever status it claims)."""
    assert b.arrays is not None  # _verify returns before when arrays.npz was not read
    problems: list[str] = []
    by_id = {r.id: r for r in b.records}
    with_informational = {st.name for st in hooks.stages if st.run is not None}
    plain = _plain_comparisons(b.records, b.arrays, hooks)
    for r in b.records:
        if r.status == "informational":  # stage 3: numbers without a verdict
            if hooks.stages and r.stage not in with_informational:
                problems.append(f"record {r.id}: status informational in stage {r.stage}, "
                                "whose rows always carry a verdict")
                continue
            problems += _verify_informational(r, b.arrays)
            continue
        if r.status not in ("passed", "failed", "unconverged"):
            if r.passed is not None or r.max_abs is not None:
                problems.append(f"record {r.id}: status {r.status} carries a verdict")
            elif r.key_a and r.key_b and r.key_a in b.arrays and r.key_b in b.arrays:
                problems.append(_claims_no_comparison(r, b.arrays))
            continue
        if r.atol is None or r.rtol is None:
            problems.append(f"record {r.id}: status {r.status} without a tolerance")
            continue
        table_tol = TABLE.get((r.stage, r.quantity))
        if table_tol is None or (table_tol.atol, table_tol.rtol) != (r.atol, r.rtol):
            problems.append(f"record {r.id}: tolerance (atol {r.atol!r}, rtol {r.rtol!r}) "
                            f"differs from table {TABLE_VERSION}")
        recompute_record = hooks.recompute.get(r.stage)
        if recompute_record is not None:  # e.g. replay: windows, gates, derived quantities
            stacked = plain.get(id(r))  # the hook's plain compare, measured with the rest
            try:
                if isinstance(stacked, Exception):
                    raise stacked
                again = recompute_record(r, b.arrays, by_id) if stacked is None else stacked
            except Exception as e:  # noqa: BLE001 - a hook on hostile data: a problem
                problems.append(f"record {r.id}: cannot recompute ({type(e).__name__}: {e})")
                continue
            if again != r:  # every field (the dataclass compares them in order)
                diff = [k for k, v in again.to_json().items() if r.to_json()[k] != v]
                problems.append(f"record {r.id}: recomputed {', '.join(diff)} differ")
            continue
        if r.status == "unconverged":
            problems.append(f"record {r.id}: status unconverged in a stage without gates")
            continue
        missing = [k for k in (r.key_a, r.key_b, r.key_labels) if k and k not in b.arrays]
        if missing or not r.key_a or not r.key_b:
            problems.append(f"record {r.id}: array {missing[0] if missing else ''!r} missing")
            continue
        redone = plain[id(r)]
        if isinstance(redone, Exception):
            problems.append(f"record {r.id}: cannot recompute ({type(redone).__name__}: "
                            f"{redone})")
            continue
        again = redone
        if r.stage in hooks.reason_stated and (not again.reason or again.status == "failed"):
            again.reason = r.reason  # such rows state their solver's law (not computed)
        if again != r:
            diff = [k for k, v in again.to_json().items() if r.to_json()[k] != v]
            moved = ", ".join(f"{k}={getattr(r, k)!r}->{getattr(again, k)!r}"
                              for k in diff[:3])
            problems.append(f"record {r.id}: recomputed {', '.join(diff)} differ ({moved})")
    return problems


def _plain_comparisons(records: Sequence[Record], arrays: Arrays,
                       hooks: Hooks) -> dict[int, Record | Exception]:
    """{id(record): ``compare`` of the row again, or what it raised} of the rows
    ``_record_problems`` recomputes by ``compare`` alone (scored, no stage hook, their
    arrays in the bundle), all at once (``compare_each``: the same records as one
    ``compare`` each)."""
    rows = [r for r in records if r.status in ("passed", "failed")
            and r.atol is not None and r.rtol is not None
            and r.key_a in arrays and r.key_b in arrays
            and (not r.key_labels or r.key_labels in arrays)
            and (r.stage not in hooks.recompute or _compared_plainly(r, arrays, hooks))]
    again = compare_each([(r.id, r.stage, r.fixture, r.quantity, r.engine_a, r.engine_b,
                           arrays[r.key_a], arrays[r.key_b],
                           Tolerance(cast(float, r.atol), cast(float, r.rtol), ""),
                           r.key_a, r.key_b,
                           arrays[r.key_labels] if r.key_labels else None, r.key_labels)
                          for r in rows])
    return {id(r): x for r, x in zip(rows, again)}


def _compared_plainly(r: Record, arrays: Arrays, hooks: Hooks) -> bool:
    """Whether the recompute hook of ``r``'s stage computes it as ``compare`` alone (False
    when the stage says nothing, or asking raises: the hook itself then recomputes it)."""
    plainly = hooks.compared_plainly.get(r.stage)
    try:
        return plainly is not None and plainly(r, arrays)
    except Exception:  # noqa: BLE001 - a hostile row: the hook says what is wrong with it
        return False


def _claims_no_comparison(r: Record, arrays: Arrays) -> str:
    """A row that claims no comparison was made while it names two arrays in the bundle:
    the comparison, recomputed with the table's tolerance."""
    tol = TABLE.get((r.stage, r.quantity))
    if tol is None:
        return (f"record {r.id}: status {r.status}, but its arrays {r.key_a} and {r.key_b} "
                "are in the bundle")
    try:
        again = compare(r.id, r.stage, r.fixture, r.quantity, r.engine_a, r.engine_b,
                        arrays[r.key_a], arrays[r.key_b], tol, r.key_a, r.key_b)
        got = again.status + (f" (max_rel {again.max_rel:.3g})"
                              if again.max_rel is not None else "")
    except (ValueError, IndexError, TypeError) as e:
        got = f"not comparable ({e})"
    return (f"record {r.id}: status {r.status}, but its arrays are in the bundle; "
            f"recomputed: {got}")


def _verify_informational(r: Record, arrays: Arrays) -> list[str]:
    """Recompute an informational record (harness/core/records.py ``inform``); a note without
    arrays (no key_a) must carry no numbers."""
    if r.passed is not None:
        return [f"record {r.id}: informational record carries a verdict"]
    if not r.key_a:
        return [] if r.max_abs is None else [f"record {r.id}: note carries numbers"]
    try:
        a, c = arrays[r.key_a], arrays[r.key_b]
        labels = arrays[r.key_labels] if r.key_labels else None
    except KeyError as e:
        return [f"record {r.id}: array {e} missing"]
    try:
        again = inform(r.id, r.stage, r.fixture, r.quantity, r.engine_a, r.engine_b, a, c,
                       r.key_a, r.key_b, labels, r.key_labels,
                       r.reason.split("; non-finite")[0])
    except (ValueError, IndexError, TypeError) as e:
        return [f"record {r.id}: {e}"]
    if again.to_json() != r.to_json():
        diff = [k for k, v in again.to_json().items() if r.to_json()[k] != v]
        return [f"record {r.id}: recomputed {', '.join(diff)} differ"]
    return []


# ----- the run's plan -------------------------------------------------------------------
_STATE_LABEL = re.compile(r"^state (\d+)(?: / (.*))?$", re.S)


def _split_id(r: Record) -> tuple[str, ...]:
    """(stage, quantity, rest) of a row id ``FIXTURE/STAGE/QUANTITY/REST``."""
    tail = r.id[len(r.fixture) + 1:] if r.id.startswith(r.fixture + "/") else ""
    parts = tail.split("/", 2)
    return tuple(parts) if len(parts) == 3 else ("", "", "")


def _plan_problems(manifest: Json, records: Sequence[Record], arrays: Arrays,
                   hooks: Hooks) -> list[str]:
    """The rows of the sampled stages against what the manifest's fixtures and engines, the
    samples and the gating imply (``hooks.stages``: the sampled stages in run order)."""
    if not hooks.stages:
        return []
    out: list[str] = []
    engines = list(manifest["engines"])
    pairs = _pair_orientation(records, engines)
    S = manifest["samples"]
    by_id = {r.id: r for r in records}
    known = {f["name"] for f in manifest["fixtures"]}
    sampled = {st.name for st in hooks.stages}
    by_fixture: dict[str, list[Record]] = {}
    for r in records:
        if r.stage in sampled and r.fixture not in known:
            out.append(f"record {r.id}: fixture {r.fixture} is not in the manifest")
        by_fixture.setdefault(r.fixture, []).append(r)
    for f in manifest["fixtures"]:
        fx = f["name"]
        rows = by_fixture.get(fx, [])
        for k in ("q", "v", "tau", "vdot"):
            a = arrays.get(f"in/{fx}/{k}")
            if a is None or a.ndim != 2 or a.shape[0] != S:
                out.append(f"{fx}: input in/{fx}/{k} is missing or does not hold the "
                           f"manifest's {S} samples")
        load_fail = {r.engine_a: r.reason for r in rows  # failed, or reads no such model
                     if r.quantity == "load" and r.id == f"{fx}/{r.stage}/load/{r.engine_a}"
                     and r.status in ("error", "not_provided")}
        loaded = [e for e in engines if e not in load_fail]
        if set(f["provides"]) != set(loaded):
            out.append(f"{fx}: engines that loaded the model ({', '.join(loaded)}) differ "
                       f"from those the manifest lists APIs for ({', '.join(f['provides'])})")
        blocked_engine = {e: f"failed to load: {w}" for e, w in load_fail.items()}
        blocked_pair: dict[tuple[str, str], str] = {}
        for st in hooks.stages:
            names = {q.name for q in st.quantities}
            st_rows = [r for r in rows if r.stage == st.name and not
                       (r.quantity == "load" and r.id.endswith(f"/load/{r.engine_a}"))]
            if st.quantities:
                own = [r for r in st_rows if _split_id(r)[1] in names]
                if own or any(f"labels/{fx}/{q.name}" in arrays for q in st.quantities):
                    out += _stage_plan(fx, f, st, own, loaded, pairs, S, arrays, by_id,
                                       blocked_engine, blocked_pair)
                own_ids = {r.id for r in own}
                out += _closed_form_rows(fx, st, [r for r in st_rows if r.id not in own_ids],
                                         engines)
                block_on(own, blocked_engine, blocked_pair)
            else:  # a stage with its own runner: its pair rows follow the same gating
                for r in st_rows:
                    if r.engine_a in loaded and r.engine_b in loaded:
                        why = blocked_why(r.engine_a, r.engine_b, blocked_engine, blocked_pair)
                        if r.status == "not_scored" and r.reason != why:
                            out.append(f"record {r.id}: not_scored "
                                       + (f"with reason {r.reason!r}, the gating gives "
                                          f"{why!r}" if why else
                                          "although no earlier row of the pair failed"))
                        elif r.status != "not_scored" and why:
                            out.append(f"record {r.id}: {r.status} although {why}")
                block_on(st_rows, blocked_engine, blocked_pair)
    # a run evaluates the same stages on every model (a stage limited to some models by
    # its ``applies`` rule excepted): one fixture without a stage the others have lost it
    for st in hooks.stages:
        if not st.quantities or st.applies is not None:
            continue
        have = [f["name"] for f in manifest["fixtures"] if any(
            f"labels/{f['name']}/{q.name}" in arrays for q in st.quantities)]
        if have:
            for f in manifest["fixtures"]:
                if f["name"] not in have:
                    out.append(f"{f['name']}: no rows of stage {st.name}, which the run "
                               f"evaluated on {', '.join(have)}")
    return out


def _pair_orientation(records: Sequence[Record], engines: Sequence[str]
                      ) -> dict[frozenset[str], tuple[str, str]]:
    """{{a, b}: (a, b)}: each pair of the run's engines as its first row names it (a~b).
    Which engine of a pair comes first is the run's engine order; it is read from the rows
    (records.json is a list), never from the order of the manifest's ``engines`` object:
    a JSON object's keys have no order (the seal hashes them sorted, and a manifest
    written again with its keys sorted is the same manifest)."""
    names = set(engines)
    out: dict[frozenset[str], tuple[str, str]] = {}
    for r in records:
        if r.engine_a in names and r.engine_b in names and r.engine_a != r.engine_b:
            out.setdefault(frozenset((r.engine_a, r.engine_b)), (r.engine_a, r.engine_b))
    return out


def _stage_plan(fx: str, f: Json, st: SampledStage, own: list[Record], loaded: list[str],
                pairs: dict[frozenset[str], tuple[str, str]], S: int, arrays: Arrays,
                by_id: dict[str, Record], blocked_engine: dict[str, str],
                blocked_pair: dict[tuple[str, str], str]) -> list[str]:
    """Problems of one sampled stage's rows on fixture ``fx`` (the stage runner's rows:
    per quantity, each live engine's output or a row saying why not; the declared and
    reference rows of each output; every engine pair, scored or not_scored, named as
    ``pairs`` orients it, else in the order of ``loaded``)."""
    out: list[str]
    # row id -> "single", "scored", "reference" or ("not_scored", why)
    expected: dict[str, str | tuple[str, str]]
    out, expected = [], {}
    for q in st.quantities:
        lkey = f"labels/{fx}/{q.name}"
        labels = arrays.get(lkey)
        if labels is None:
            out.append(f"{fx}/{st.name}/{q.name}: labels {lkey} missing")
            continue
        out += _label_problems(fx, f, q.name, labels, S)
        outs: list[str] = []
        for e in loaded:
            okey, sid = f"out/{fx}/{q.name}/{e}", f"{fx}/{st.name}/{q.name}/{e}"
            have, single = okey in arrays, by_id.get(sid)
            if e in blocked_engine:
                if have:
                    out.append(f"{fx}/{st.name}/{q.name}: {e} has an output although "
                               f"{e} {blocked_engine[e]}")
                continue
            if have and arrays[okey].shape[:1] != labels.shape[:1]:
                out.append(f"array {okey}: {arrays[okey].shape[:1]} samples, its labels "
                           f"{labels.shape[:1]}")
            if single is not None:
                expected[sid] = "single"
                if have:
                    out.append(f"record {sid}: status {single.status}, but {e}'s output "
                               f"{okey} is in the bundle")
                elif single.status not in ("not_provided", "error"):
                    out.append(f"record {sid}: status {single.status}; a row of one engine "
                               "is not_provided or error")
                elif single.status == "not_provided" and q.needs in f["provides"].get(e, {}):
                    out.append(f"record {sid}: not_provided, but the manifest names {e}'s "
                               f"API for {q.needs}: {f['provides'][e][q.needs]!r}")
            elif not have:
                out.append(f"{fx}/{st.name}/{q.name}: no output of {e} and no row saying "
                           "why (a row is missing)")
            if have:
                outs.append(e)
        if q.declared is not None and outs:
            if f"out/{fx}/{q.name}/{DECLARED}" not in arrays:
                out.append(f"{fx}/{st.name}/{q.name}: the declared value is missing")
            for e in outs:
                expected[f"{fx}/{st.name}/{q.name}/{DECLARED}~{e}"] = "scored"
        if q.reference is not None:
            for e in outs:
                expected[f"{fx}/{st.name}/{q.name}/{q.reference_name}~{e}"] = "reference"
        for i, first in enumerate(loaded):
            for second in loaded[i + 1:]:
                a, b = pairs.get(frozenset((first, second)), (first, second))
                rid = f"{fx}/{st.name}/{q.name}/{a}~{b}"
                why = blocked_why(a, b, blocked_engine, blocked_pair)
                if why:
                    expected[rid] = ("not_scored", why)
                elif a in outs and b in outs:
                    expected[rid] = "scored"
    for rid, want in expected.items():
        r = by_id.get(rid)
        if want == "single":
            continue
        if r is None:
            out.append(f"record {rid} is missing (the run's fixtures, engines and stages "
                       "imply it)")
        elif want == "scored" and r.status not in ("passed", "failed"):
            out.append(f"record {rid}: status {r.status}; both engines' outputs are in the "
                       "bundle and nothing earlier blocks the pair, so it is scored")
        elif want == "reference" and r.status not in ("passed", "failed", "error"):
            out.append(f"record {rid}: status {r.status}; the engine's output is in the "
                       "bundle, so it is scored against its reference")
        elif isinstance(want, tuple) and (r.status, r.reason) != want:
            out.append(f"record {rid}: {r.status} ({r.reason!r}); the gating gives "
                       f"not_scored ({want[1]!r})")
    for r in own:
        if r.id not in expected:
            out.append(f"record {r.id}: not a row the run's fixtures, engines and gating "
                       "produce")
    return out


def _label_problems(fx: str, f: Json, qname: str, labels: NDArray[Any], S: int) -> list[str]:
    """Sample labels "state i" / "state i / frame" of a per-sample quantity: every state
    0 … S−1 in order, each with every frame of the fixture (a sample cut from the arrays
    is a problem, not a smaller run)."""
    texts = [str(x) for x in np.asarray(labels).reshape(-1)]
    m = [_STATE_LABEL.match(t) for t in texts]
    if not texts or not all(m):
        return []  # labelled by body or joint (stage 0): not per sample
    k = len(texts) // S if S else 0
    matched = cast("list[re.Match[str]]", m)  # every label matched: all(m) above
    frames = [mm.group(2) for mm in matched]
    want_frames = f["frames"] if frames[0] is not None else [None]
    ok = (k >= 1 and len(texts) == S * k and k == len(want_frames) and
          all(int(mm.group(1)) == i // k for i, mm in enumerate(matched)) and
          all(fr == want_frames[i % k] for i, fr in enumerate(frames)))
    return [] if ok else [f"labels/{fx}/{qname}: not the {S} samples (and the fixture's "
                          "frames) of the manifest"]


def _closed_form_rows(fx: str, st: SampledStage, rows: list[Record],
                      engines: list[str]) -> list[str]:
    """Rows of a sampled stage outside its quantities (e.g. analytic fixtures against a
    closed form, one row per engine): against one reference, every quantity (its
    tolerance class, "…/float32", set aside) has the same engines (a row deleted from one
    quantity is missing there), except where a not_provided row of one engine names the
    quantity's case ("grazing" for "grazing.event_time_s") and says why."""
    out: list[str]
    groups: dict[str, dict[str, set[str]]]
    out, groups = [], {}
    said = {(r.engine_a, r.quantity) for r in rows
            if not r.engine_b and r.status == "not_provided"}
    for r in rows:
        if r.engine_b:
            groups.setdefault(r.engine_a, {}).setdefault(r.quantity.partition("/")[0],
                                                         set()).add(r.engine_b)
    for ref, per in sorted(groups.items()):
        every = set().union(*per.values())
        for q, have in sorted(per.items()):
            missing = [e for e in engines if e in every - have
                       and (e, q.partition(".")[0]) not in said]
            if missing:
                out.append(f"{fx}/{st.name}/{q}: no {ref}~ row for {', '.join(missing)} "
                           "(a row is missing)")
    return out
