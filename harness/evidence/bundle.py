"""Evidence bundles: a folder with manifest.json, arrays.npz, records.json, index.html.

* manifest.json — schema version, harness version, git commit, engine versions (and
  the reasons of unavailable engines), fixtures (source, sha256, nq, nv, frames, joints,
  which engine API computed each quantity), sha256 of every array, tolerance-table
  version and the entries used, platform, command line, seed, samples, creation time.
* arrays.npz — every input and output a record was computed from (no pickles:
  numeric and unicode arrays only; loaded with ``allow_pickle=False``).
* records.json — list of records (harness/core/records.py), one per comparison.
* manifest ``replay`` — for bundles with stage 5: per replay case the candidate (hashes,
  provenance), the integrator settings of every run and the observer engine
  (harness/stages/replay/stage.py validates it); ``{}`` otherwise.

One schema, validated strictly on read: unknown or missing fields are errors. Writes
are atomic: the bundle is built in a temporary sibling folder and swapped in with one
rename (an existing bundle is exchanged atomically with ``renameat2(RENAME_EXCHANGE)``
on Linux, then deleted), so a reader sees the old bundle or the new one, never a mix.
``verify`` recomputes every record from the arrays and reports any difference.
"""
from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness.core.errors import BadInput
from harness.core.io import array_sha256, npz_bytes, write_folder_atomic
from harness.core.records import Record, compare
from harness.core.tolerances import TABLE, TABLE_VERSION, Tolerance
from harness.core.version import __version__

SCHEMA_VERSION = 2  # 2: "replay" manifest key (stage 5)
MANIFEST_TYPES = {"schema_version": int, "harness_version": str, "git_commit": str,
                  "engines": dict, "unavailable_engines": dict, "fixtures": list,
                  "arrays_sha256": dict, "records_sha256": str,
                  "tolerance_table_version": str, "tolerances": dict, "platform": dict,
                  "command_line": list, "seed": int, "samples": int, "created": str,
                  "kind": str, "arrays_file_sha256": str, "manifest_sha256": str,
                  "replay": dict}
MANIFEST_KEYS = set(MANIFEST_TYPES)
FIXTURE_KEYS = {"name", "source", "digest", "nq", "nv", "floating", "frames", "joints",
                "provides", "notes"}


@dataclass(frozen=True)
class Hooks:
    """What the stages lend the evidence layer, which imports no stage (the composition root
    builds this from harness.stages.STAGES).

    recompute: {stage: (record, arrays, records_by_id) -> Record} for rows whose verdict is
    more than a comparison of two arrays; sections: {manifest key: (section) -> problem or
    ""}, the strict check of a stage's manifest section; thresholds: {manifest key: table
    quantities the section uses (recorded in the manifest)}."""

    recompute: dict = field(default_factory=dict)
    sections: dict = field(default_factory=dict)
    thresholds: dict = field(default_factory=dict)


def git_commit() -> str:
    root = Path(__file__).resolve().parent.parent
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                             capture_output=True, text=True, timeout=5)
        return out.stdout.strip() if out.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _records_blob(records) -> bytes:
    return json.dumps([r.to_json() for r in records], indent=1, allow_nan=False).encode()


def build_manifest(result, unavailable: dict, command_line: list, hooks: Hooks,
                   replay: dict | None = None) -> dict:
    """``replay``: the replay section (the replay stage's info) or None."""
    used = {(r.stage, r.quantity) for r in result.records if (r.stage, r.quantity) in TABLE}
    if replay:
        used |= {("replay", q) for q in hooks.thresholds["replay"]}
    used = sorted(used)
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "kind": "parity" if not replay else "parity+replay",
        "replay": dict(replay or {}),
        "harness_version": __version__,
        "git_commit": git_commit(),
        "engines": {n: v for n, v in result.engines},
        "unavailable_engines": dict(unavailable),
        "fixtures": [{"name": f.name, "source": f.source, "digest": f.digest, "nq": f.nq,
                      "nv": f.nv, "floating": f.floating, "frames": f.frames,
                      "joints": f.joints, "provides": f.provides, "notes": f.notes}
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


def manifest_digest(manifest: dict) -> str:
    """sha256 of the manifest's canonical JSON without this field: any later edit of the
    manifest (an engine version, a tolerance, the seed) is detectable."""
    body = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"),
                                     allow_nan=False).encode()).hexdigest()


def write_bundle(out, result, unavailable: dict, command_line: list, hooks: Hooks,
                 html: str | None = None, extra_files: dict | None = None,
                 replay: dict | None = None, manifest: dict | None = None) -> Path:
    """The bundle folder, written atomically; ``manifest`` if already built (the report
    needs it first), else built here."""
    if manifest is None:
        manifest = build_manifest(result, unavailable, command_line, hooks, replay)
    files = {"manifest.json": json.dumps(manifest, indent=1, allow_nan=False).encode(),
             "arrays.npz": npz_bytes(result.arrays),
             "records.json": _records_blob(result.records)}
    if hashlib.sha256(files["arrays.npz"]).hexdigest() != manifest["arrays_file_sha256"]:
        raise RuntimeError("arrays.npz is not deterministic")  # would be a harness bug
    if html is not None:
        files["index.html"] = html.encode()
    files.update(extra_files or {})
    return write_folder_atomic(Path(out), files)


# ----- strict read ----------------------------------------------------------------------
class Bundle:
    def __init__(self, path, manifest, records, arrays):
        self.path, self.manifest, self.records, self.arrays = path, manifest, records, arrays


def read_bundle(path, hooks: Hooks) -> Bundle:
    path = Path(path)
    if not path.is_dir():
        raise BadInput(str(path), "is not a bundle folder")
    for name in ("manifest.json", "records.json", "arrays.npz"):
        if not (path / name).is_file():
            raise BadInput(str(path), f"missing {name}")
    try:
        manifest = json.loads((path / "manifest.json").read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise BadInput(str(path / "manifest.json"), f"not valid JSON ({e})")
    _check_manifest(path / "manifest.json", manifest, hooks)
    raw = (path / "records.json").read_bytes()
    try:
        rows = json.loads(raw)
        if not isinstance(rows, list):
            raise ValueError("records.json must hold a list")
        records = [Record.from_json(r) if isinstance(r, dict) else _bad_row(r) for r in rows]
    except (UnicodeDecodeError, json.JSONDecodeError, ValueError, TypeError) as e:
        raise BadInput(str(path / "records.json"), str(e))
    if hashlib.sha256(raw).hexdigest() != manifest["records_sha256"]:
        raise BadInput(str(path / "records.json"), "sha256 differs from the manifest")
    try:
        with np.load(path / "arrays.npz", allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except Exception as e:  # any failure to parse the archive (zlib, zip, npy header)
        raise BadInput(str(path / "arrays.npz"), f"unreadable ({type(e).__name__}: {e})")
    if set(arrays) != set(manifest["arrays_sha256"]):
        raise BadInput(str(path / "arrays.npz"), "array names differ from the manifest")
    return Bundle(path, manifest, records, arrays)


def _bad_row(r):
    raise ValueError(f"record is not an object: {str(r)[:40]!r}")


def _check_manifest(where, m, hooks: Hooks):
    if not isinstance(m, dict):
        raise BadInput(str(where), "manifest must be an object")
    unknown, missing = set(m) - MANIFEST_KEYS, MANIFEST_KEYS - set(m)
    if unknown or missing:
        raise BadInput(str(where), f"unknown fields {sorted(unknown)}, missing {sorted(missing)}")
    for k, t in MANIFEST_TYPES.items():
        if not isinstance(m[k], t) or (t is int and isinstance(m[k], bool)):
            raise BadInput(str(where), f"field {k} must be {t.__name__}")
    if m["schema_version"] != SCHEMA_VERSION:
        raise BadInput(str(where), f"schema version {m['schema_version']!r}, this harness "
                                   f"reads {SCHEMA_VERSION}")
    if not isinstance(m["fixtures"], list) or not all(
            isinstance(f, dict) and set(f) == FIXTURE_KEYS for f in m["fixtures"]):
        raise BadInput(str(where), "fixtures entries have unknown or missing fields")
    if not all(isinstance(v, str) for v in m["arrays_sha256"].values()):
        raise BadInput(str(where), "arrays_sha256 values must be strings")
    for key, check in hooks.sections.items():
        if m.get(key):
            problem = check(m[key])
            if problem:
                raise BadInput(str(where), f"{key} section: {problem}")
    try:
        digest = manifest_digest(m)
    except (TypeError, ValueError) as e:
        raise BadInput(str(where), f"not canonical JSON ({e})")
    if digest != m["manifest_sha256"]:
        raise BadInput(str(where), "manifest_sha256 differs: the manifest was edited")


# ----- verify ---------------------------------------------------------------------------
def verify(path, hooks: Hooks) -> list:
    """Recompute every record of a bundle; return a list of one-line problems (empty if
    the bundle is consistent). Raises BadInput if the bundle cannot be read."""
    b = read_bundle(path, hooks)
    problems = []
    if hashlib.sha256((Path(path) / "arrays.npz").read_bytes()).hexdigest() != \
            b.manifest["arrays_file_sha256"]:
        problems.append("arrays.npz: file sha256 differs from the manifest (changed after "
                        "it was written)")
    for k, a in b.arrays.items():
        if array_sha256(a) != b.manifest["arrays_sha256"][k]:
            users = [r.id for r in b.records if k in (r.key_a, r.key_b, r.key_labels)]
            problems.append(f"array {k}: sha256 differs from the manifest (used by "
                            f"{', '.join(users) if users else 'no record'})")
    ids = [r.id for r in b.records]
    if len(set(ids)) != len(ids):
        problems.append("duplicate record ids")
    by_id = {r.id: r for r in b.records}
    for r in b.records:
        if r.status == "informational":  # stage 3: numbers without a verdict
            problems += _verify_informational(r, b.arrays)
            continue
        if r.status not in ("passed", "failed", "unconverged"):
            if r.passed is not None or r.max_abs is not None:
                problems.append(f"record {r.id}: status {r.status} carries a verdict")
            continue
        recompute_record = hooks.recompute.get(r.stage)
        if recompute_record is not None:  # e.g. replay: windows, gates, derived quantities
            table_tol = TABLE.get((r.stage, r.quantity))
            if (table_tol is None or (table_tol.atol, table_tol.rtol) != (r.atol, r.rtol)) \
                    and b.manifest["tolerance_table_version"] == TABLE_VERSION:
                problems.append(f"record {r.id}: tolerance differs from table {TABLE_VERSION}")
            try:
                again = recompute_record(r, b.arrays, by_id)
            except (KeyError, ValueError, IndexError) as e:
                problems.append(f"record {r.id}: cannot recompute ({type(e).__name__}: {e})")
                continue
            if again.to_json() != r.to_json():
                diff = [k for k, v in again.to_json().items() if r.to_json()[k] != v]
                problems.append(f"record {r.id}: recomputed {', '.join(diff)} differ")
            continue
        if r.status == "unconverged":
            problems.append(f"record {r.id}: status unconverged in a stage without gates")
            continue
        try:
            a, c = b.arrays[r.key_a], b.arrays[r.key_b]
            labels = b.arrays[r.key_labels] if r.key_labels else None
        except KeyError as e:
            problems.append(f"record {r.id}: array {e} missing")
            continue
        tol = Tolerance(r.atol, r.rtol, "")
        table_tol = TABLE.get((r.stage, r.quantity))
        if table_tol is None or (table_tol.atol, table_tol.rtol) != (r.atol, r.rtol):
            if b.manifest["tolerance_table_version"] == TABLE_VERSION:
                problems.append(f"record {r.id}: tolerance differs from table "
                                f"{TABLE_VERSION}")
        try:
            again = compare(r.id, r.stage, r.fixture, r.quantity, r.engine_a, r.engine_b,
                            a, c, tol, r.key_a, r.key_b, labels, r.key_labels)
        except ValueError as e:
            problems.append(f"record {r.id}: {e}")
            continue
        if r.stage == "constrained" and not again.reason:
            again.reason = r.reason  # stage 3 rows state their solver's law (not computed)
        if again.to_json() != r.to_json():
            diff = [k for k, v in again.to_json().items() if r.to_json()[k] != v]
            moved = ", ".join(f"{k}={getattr(r, k)!r}->{getattr(again, k)!r}"
                              for k in diff[:3])
            problems.append(f"record {r.id}: recomputed {', '.join(diff)} differ ({moved})")
    return problems


def _verify_informational(r, arrays) -> list:
    """Recompute an informational record (harness/core/records.py ``inform``); a note without
    arrays (no key_a) must carry no numbers."""
    from harness.core.records import inform

    if r.passed is not None:
        return [f"record {r.id}: informational record carries a verdict"]
    if not r.key_a:
        return [] if r.max_abs is None else [f"record {r.id}: note carries numbers"]
    try:
        a, c = arrays[r.key_a], arrays[r.key_b]
        labels = arrays[r.key_labels] if r.key_labels else None
    except KeyError as e:
        return [f"record {r.id}: array {e} missing"]
    again = inform(r.id, r.stage, r.fixture, r.quantity, r.engine_a, r.engine_b, a, c,
                   r.key_a, r.key_b, labels, r.key_labels, r.reason.split("; non-finite")[0])
    if again.to_json() != r.to_json():
        diff = [k for k, v in again.to_json().items() if r.to_json()[k] != v]
        return [f"record {r.id}: recomputed {', '.join(diff)} differ"]
    return []
