"""Hostile inputs end in one line and exit 2, never in a hang, an exhausted memory, a
RecursionError or a silently wrong reading: devices and FIFOs, oversized files, zip bombs
and arrays claiming petabytes, deep JSON nesting, repeated JSON keys, booleans for numbers,
models beyond the supported size, truncated and escape-laden captures, several bad links,
options blamed on the wrong option, warnings printed before the error."""
from __future__ import annotations

import io
import json
import os
import struct
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from harness import api
from harness.capture.ingest import ingest
from harness.capture.synthetic import kinematic_swing, write_c3d
from harness.core.errors import BadInput
from harness.core.spec import Body, FixtureSpec, Joint
from harness.core.strict import MAX_BODIES, MAX_NV, loads_json, npz_arrays
from harness.model import candidate as cd
from harness.model.urdf_import import load_urdf, load_urdf_with_notes
from tests.conftest import ROOT, run_cli

GOLDEN = ROOT / "fixtures" / "golden" / "double_pendulum.urdf"
DRIVER = ROOT / "data" / "swing" / "driver.c3d"


def _bad(fn, *args, **kw) -> BadInput:
    with pytest.raises(BadInput) as e:
        fn(*args, **kw)
    assert "\n" not in str(e.value)
    return e.value


def _chain_urdf(path: Path, n: int) -> str:
    links = [f'<link name="l{i}"><inertial><origin xyz="0 0 -0.05"/><mass value="1"/>'
             '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/>'
             '</inertial></link>' for i in range(n)]
    joints = [f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/>'
              f'<child link="l{i}"/><origin xyz="0 0 -0.1"/><axis xyz="0 1 0"/>'
              '<limit lower="-3" upper="3"/></joint>' for i in range(1, n)]
    path.write_text('<robot name="chain">' + "".join(links + joints) + "</robot>")
    return str(path)


# ----- files that are not regular files, or too large -------------------------------------
def test_devices_and_fifos_are_refused_without_reading(tmp_path):
    e = _bad(load_urdf, "/dev/zero")
    assert e.where == "/dev/zero" and "character device" in e.problem
    fifo = tmp_path / "model.urdf"
    os.mkfifo(fifo)  # no writer: a blocking open would wait for ever
    proc = run_cli("parity", "--urdf", fifo, "--out", tmp_path / "out", timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "FIFO" in proc.stderr and str(fifo) in proc.stderr
    big = tmp_path / "big.urdf"
    with open(big, "wb") as fh:  # sparse: 65 MiB that take no disk
        fh.truncate(65 * 2 ** 20)
    assert "over the 64 MiB limit" in _bad(load_urdf, str(big)).problem


def test_candidate_whose_model_is_a_device_is_refused(tmp_path):
    path, _ = api.synth("pendulum", tmp_path / "c.json", duration=0.1)
    m = json.loads(path.read_text())
    m["model"] = {"kind": "urdf", "path": "/dev/zero", "floating": False, "sha256": "0" * 64}
    path.write_text(json.dumps(m))
    e = _bad(cd.load, path)
    assert "model file /dev/zero" in str(e) and "character device" in e.problem


# ----- npz archives: sizes declared by the headers, zip bombs ------------------------------
def _npz_member(name: str, header_shape, data: bytes, dtype="<f8") -> bytes:
    """A one-member .npz whose .npy header declares ``header_shape`` and whose data is
    ``data`` (as a zip bomb would pair them)."""
    hdr = repr({"descr": dtype, "fortran_order": False,
                "shape": tuple(header_shape)}).encode()
    hdr += b" " * (63 - (10 + len(hdr)) % 64) + b"\n"
    member = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr + data
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{name}.npy", member)
    return buf.getvalue()


def test_npz_headers_are_checked_before_anything_is_allocated():
    petabytes = _npz_member("x", (2 ** 50,), b"")  # claims 8 PiB, holds nothing
    assert "header declares" in _bad(npz_arrays, petabytes, "a.npz").problem
    bomb = _npz_member("x", (4,), b"\0" * (64 * 2 ** 20))  # 32 bytes declared, 64 MiB held
    assert len(bomb) < 2 ** 20
    assert "more data than its header declares" in _bad(npz_arrays, bomb, "a.npz").problem
    ok = npz_arrays(_npz_member("x", (2, 2), np.arange(4.0).tobytes()), "a.npz")
    assert np.array_equal(ok["x"], [[0.0, 1.0], [2.0, 3.0]])
    pickled = _npz_member("x", (1,), b"", dtype="|O")
    assert "no pickles" in _bad(npz_arrays, pickled, "a.npz").problem


def _npz(arrays: dict, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    """An .npz of ``arrays`` as numpy writes its members, with ``compression``."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for k, a in arrays.items():
            member = io.BytesIO()
            np.save(member, a)
            zf.writestr(f"{k}.npy", member.getvalue())
    return buf.getvalue()


def test_npz_members_are_checked_against_the_zip_directory():
    """Deflated and stored members read the same; a member's CRC-32, sizes and local
    header are checked against the archive's directory (a forged CRC, corrupted or cut
    compressed data, a local header naming another file are each refused)."""
    arrays = {"a/x": np.arange(12.0).reshape(3, 4), "b": np.array(["s", "tt"]),
              "c": np.zeros((0, 3)), "d": np.asfortranarray(np.eye(3)[:, :2])}
    for compression in (zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED):
        got = npz_arrays(_npz(arrays, compression), "a.npz")
        assert got.keys() == arrays.keys()
        for k, a in arrays.items():
            assert got[k].dtype == a.dtype and np.array_equal(got[k], a), k
    blob = _npz({"x": np.arange(1000.0)})
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        (info,) = zf.infolist()
    data_at = info.header_offset + 30 + len(info.filename) + len(info.extra)
    crc_at = blob.index(struct.pack("<I", info.CRC), info.header_offset)
    flipped = bytearray(blob)
    flipped[crc_at] ^= 0xFF  # the local header's CRC only: zipfile trusts the directory's
    assert np.array_equal(npz_arrays(bytes(flipped), "a.npz")["x"], np.arange(1000.0))
    central = blob.rindex(struct.pack("<I", info.CRC))
    for where, what in ((central, "CRC-32 in the directory"),
                        (data_at + info.compress_size // 2, "compressed data")):
        bad = bytearray(blob)
        bad[where] ^= 0x55
        e = _bad(npz_arrays, bytes(bad), "a.npz")
        assert e.problem.startswith("array x: "), (what, e.problem)
    renamed = bytearray(blob)
    renamed[info.header_offset + 30] = ord("y")  # the local header names another file
    assert "unreadable" in _bad(npz_arrays, bytes(renamed), "a.npz").problem
    cut = blob[:data_at + info.compress_size // 2] + blob[data_at + info.compress_size:]
    assert _bad(npz_arrays, cut, "a.npz").problem


def test_candidate_arrays_must_match_the_manifest_before_they_are_read(tmp_path):
    path, c = api.synth("pendulum", tmp_path / "c.json", duration=0.1)
    n, nv = c.t.size, c.model.layout.nv
    npz = path.with_suffix(".npz")
    with zipfile.ZipFile(npz) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    bomb = _npz_member("tau", (n * 10 ** 8, nv), b"")  # a tau of 8.8 GB, data absent
    with zipfile.ZipFile(io.BytesIO(bomb)) as zf:
        members["tau.npy"] = zf.read("tau.npy")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for k, v in members.items():
            zf.writestr(k, v)
    npz.write_bytes(buf.getvalue())
    e = _bad(cd.load, path)
    assert e.where == str(npz) and f"differs from the manifest's float64 [{n}, {nv}]" in e.problem


def test_bundle_npz_is_hashed_before_it_is_decompressed(tmp_path):
    out = tmp_path / "b"
    api.parity(fixtures=["pendulum"], out=out, samples=2, engines="mujoco,pinocchio")
    assert api.verify(out) == []
    bomb = _npz_member("in/pendulum/q", (2 ** 50,), b"")
    (out / "arrays.npz").write_bytes(bomb)
    problems = api.verify(out)  # a mismatch (exit 1); the archive is never opened
    assert any("arrays.npz: file sha256 differs" in p and "not decompressed" in p
               for p in problems)
    with pytest.raises(BadInput, match="not decompressed"):
        api.read_bundle(out)
    m = json.loads((out / "manifest.json").read_text())  # the hash updated as well
    import hashlib

    from harness.evidence.bundle import manifest_digest
    m["arrays_file_sha256"] = hashlib.sha256(bomb).hexdigest()
    m["manifest_sha256"] = manifest_digest(m)
    (out / "manifest.json").write_text(json.dumps(m))
    proc = run_cli("verify", out)
    assert proc.returncode == 2 and "header declares" in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1


# ----- JSON --------------------------------------------------------------------------------
def _depth_by_characters(text: str, limit: int) -> int | None:
    """Reference: the position of the first bracket deeper than ``limit`` outside JSON
    strings (a quote opens a string, a backslash escapes the next character in one), by a
    walk over every character; None if there is none."""
    depth, in_str, esc = 0, False, False
    for i, ch in enumerate(text):
        if in_str:
            esc, in_str = (False, True) if esc else (ch == "\\", ch != '"')
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return i
        elif ch in "]}":
            depth -= 1
    return None


def test_json_depth_scan_matches_a_character_walk():
    """The regular-expression scan against a character walk on random texts made of
    brackets, quotes, backslashes and filler (unterminated strings, escaped quotes, closing
    brackets first), each with a small limit: the same verdict and the same position."""
    import random

    from harness.core.strict import json_depth_problem

    rng = random.Random(7)
    for _ in range(20000):
        text = "".join(rng.choice('[]{}"\\ a,:\n') for _ in range(rng.randint(0, 40)))
        limit = rng.randint(0, 4)
        at = _depth_by_characters(text, limit)
        got = json_depth_problem(text, limit)
        assert (got == "") == (at is None), (text, limit, got)
        if at is not None:
            assert f"(at character {at})" in got, (text, limit, got)


def test_parsed_json_is_refused_exactly_where_the_text_scan_finds_it_too_deep():
    """loads_json parses first and walks the parsed containers; whatever it refuses for
    depth, with the scan's message and position, the scan refuses, and nothing else."""
    import random

    from harness.core.strict import MAX_JSON_DEPTH, json_depth_problem

    rng = random.Random(3)

    def value(depth: int):
        """A container nested ``depth`` deep on one path (shallower siblings beside it)."""
        if depth == 0:
            return rng.choice([1, "[[{", None, 2.5, "]}"])
        kids = [value(depth - 1)] + [value(min(depth - 1, rng.randint(0, 2)))
                                     for _ in range(rng.randint(0, 2))]
        rng.shuffle(kids)
        return kids if rng.random() < 0.5 else {f"k{i}": k for i, k in enumerate(kids)}

    seen = set()
    for _ in range(400):
        text = json.dumps(value(rng.randint(MAX_JSON_DEPTH - 3, MAX_JSON_DEPTH + 3)))
        problem = json_depth_problem(text)
        if problem:
            assert _bad(loads_json, text, "x.json").problem == \
                f"not a valid JSON: {problem}"
        else:
            assert loads_json(text, "x.json") == json.loads(text)
        seen.add(bool(problem))
    assert seen == {True, False}
    deep = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    assert f"(at character {MAX_JSON_DEPTH})" in _bad(loads_json, deep, "x.json").problem
    assert "nested deeper" in _bad(loads_json, deep[:-1] + ', {"a": 1, "a": 2}',
                                   "x.json").problem  # too deep is said first


def test_json_nesting_repeated_keys_and_constants():
    assert "nested deeper than 64" in _bad(loads_json, "[" * 100000 + "]" * 100000,
                                           "x.json").problem
    assert loads_json('{"a": "[[[[", "b": [[1]]}', "x.json") == {"a": "[[[[", "b": [[1]]}
    assert "appears twice" in _bad(loads_json, '{"a": 1, "b": {"c": 1, "c": 2}}',
                                   "x.json").problem
    assert "NaN" in _bad(loads_json, '{"a": NaN}', "x.json").problem


def test_candidate_manifest_strictness(tmp_path):
    path, _ = api.synth("pendulum", tmp_path / "c.json", duration=0.1)
    text = path.read_text()
    path.write_text(text.replace('"schema_version": 1', '"schema_version": true'))
    assert "schema_version True" in _bad(cd.load, path).problem
    path.write_text(text.replace('"schema_version": 1',
                                 '"schema_version": 1, "schema_version": 1'))
    assert "appears twice" in _bad(cd.load, path).problem
    path.write_text("[" * 50000 + "]" * 50000)
    assert "nested deeper" in _bad(cd.load, path).problem


def test_bundle_json_strictness(tmp_path):
    out = tmp_path / "b"
    api.parity(fixtures=["pendulum"], out=out, samples=2, engines="mujoco,pinocchio")
    mpath = out / "manifest.json"
    text = mpath.read_text()
    mpath.write_text(text.replace('"seed": 0', '"seed": 0, "seed": 5'))
    e = _bad(api.verify, out)
    assert e.where == str(mpath) and "appears twice" in e.problem
    mpath.write_text("[" * 100000 + "]" * 100000)
    assert "nested deeper" in _bad(api.verify, out).problem


# ----- model size and long chains -----------------------------------------------------------
def test_a_200_link_chain_is_accepted_without_recursion(tmp_path):
    """Import, validation, the declared quantities and both exports walk the tree with an
    explicit stack: they pass with a recursion limit far below the chain's depth."""
    path = _chain_urdf(tmp_path / "c200.urdf", 200)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(120)
    try:
        models = api.load_models(urdf=[path])
        m = models[0]
        assert m.layout.nv == 199 and len(m.spec.moving_joints()) == 199
        assert m.urdf.count("<joint") == 199 and m.mjcf.count("<body") == 200
        assert len(m.declared_group_inertias()) == 199
        assert m.declared_total_mass() == 199.0  # 1 kg links; the welded root excluded
    finally:
        sys.setrecursionlimit(limit)


def test_models_beyond_the_supported_size_are_refused_before_loading(tmp_path):
    big = _chain_urdf(tmp_path / "c1000.urdf", 1000)
    e = _bad(api.load_models, urdf=[big])
    assert e.where == big and f"at most {MAX_BODIES} bodies" in e.problem
    wide = _chain_urdf(tmp_path / "c300.urdf", 300)
    e = _bad(api.load_models, urdf=[wide])
    assert e.where == wide and f"at most {MAX_NV}" in e.problem
    ok = _chain_urdf(tmp_path / "c200.urdf", 200)
    e = _bad(api.parity, urdf=[ok], out=tmp_path / "o", samples=5000)
    assert e.where == ok and "would allocate" in e.problem
    assert not (tmp_path / "o").exists()


def test_tree_walks_of_a_1000_body_spec_need_no_recursion():
    bodies = tuple(Body(f"b{i}", 1.0, (0, 0, 0), (0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01))
                   for i in range(1000))
    joints = tuple(Joint(f"j{i}", "revolute", f"b{i - 1}", f"b{i}") for i in range(1, 1000))
    spec = FixtureSpec("long", bodies, joints)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(120)
    try:
        assert spec.depth_first() == [f"b{i}" for i in range(1000)]
        assert len(spec.moving_joints()) == 999
        subtree, _ = spec._masses()
        assert subtree["b0"] == 1000.0 and subtree["b999"] == 1.0
        e = _bad(spec.validate, "long.urdf")
        assert e.where == "long.urdf" and "bodies" in e.problem
    finally:
        sys.setrecursionlimit(limit)


# ----- every offending link named -----------------------------------------------------------
def test_every_link_with_a_bad_inertia_is_named(tmp_path):
    def link(name, I):
        ixx, iyy, izz = I
        return (f'<link name="{name}"><inertial><mass value="1"/><inertia ixx="{ixx}" '
                f'ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial></link>')
    joints = "".join(f'<joint name="j{c}" type="continuous"><parent link="{p}"/>'
                     f'<child link="{c}"/><axis xyz="0 0 1"/></joint>'
                     for p, c in (("base", "a"), ("a", "b"), ("b", "c")))
    p = tmp_path / "two.urdf"
    p.write_text('<robot name="r">' + link("base", (1, 1, 1)) + link("a", (0.01, 0.01, 0.05))
                 + link("b", (1, 1, 1)) + link("c", (0.02, 0.01, 0.05)) + joints + "</robot>")
    e = _bad(load_urdf, str(p))
    assert "2 links have non-physical inertias" in e.problem
    assert "link a inertial" in e.problem and "link c inertial" in e.problem
    assert "link b" not in e.problem and "--repair-inertia" in e.problem
    spec, notes = load_urdf_with_notes(str(p), repair_inertia=True)
    assert sum("nearest physical inertia" in n for n in notes) == 2


# ----- options name themselves ------------------------------------------------------------
def test_options_are_named_in_their_own_errors():
    e = _bad(api.select_engines, None, ["bogus"])
    assert e.where == "--allow-missing" and "bogus" in e.problem
    e = _bad(api.load_as_is_models, [str(GOLDEN)], engine_files={"bogus": str(GOLDEN)})
    assert e.where == "--engine-file" and "bogus" in e.problem
    e = _bad(api.select_engines, "bogus")
    assert e.where == "--engines"


# ----- captures ---------------------------------------------------------------------------
def test_truncated_capture_is_refused(tmp_path):
    raw = DRIVER.read_bytes()
    cut = tmp_path / "cut.c3d"
    cut.write_bytes(raw[:-240])
    e = _bad(ingest, str(cut))
    assert e.where == str(cut)
    assert "declares 654 frames" in e.problem and "653 complete frames" in e.problem
    assert ingest(str(DRIVER)).n_frames == 654


def test_capture_labels_are_escaped_and_warnings_are_not_printed(tmp_path):
    labels, X, _ = kinematic_swing(rate_hz=360.0)
    i = 0
    bad_label = "\x1b[31mRED\x1b[0m"
    labels = list(labels)
    labels[i] = bad_label
    Xj = X.copy()
    Xj[50:, i] += 5.0  # a jumping marker: rejected, its label printed
    cap = ingest(write_c3d(tmp_path / "ansi.c3d", labels, Xj, 360.0, "m"))
    assert "\x1b" not in "".join(cap.labels) and "\\x1b[31mRED\\x1b[0m" in cap.labels
    assert "\\x1b[31mRED\\x1b[0m" in cap.rejected
    proc = run_cli("capture", tmp_path / "ansi.c3d")
    assert proc.returncode == 0 and "\x1b" not in proc.stdout + proc.stderr
    Xn = X.copy()
    Xn[:, labels.index("HeadTop")] = np.nan  # the up axis cannot be inferred
    path = write_c3d(tmp_path / "nohead.c3d", labels, Xn, 360.0, "m")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        e = _bad(ingest, str(path))
    assert "cannot infer the up axis" in e.problem
    assert not caught, [str(w.message) for w in caught]


def test_limits_of_plus_minus_1e308_are_sampled_at_physical_positions(tmp_path):
    """A URDF whose limits say "none" with ±1e308 (their span overflows to inf) ended in
    an internal error (OverflowError, exit 3). Such a joint is sampled in the unbounded box
    inside its limits, and the engines are compared there."""
    from harness.core.conventions import MAX_SAMPLED_SPAN, UNBOUNDED_ANGLE

    text = (ROOT / "fixtures" / "golden" / "double_pendulum.urdf").read_text()
    import re

    text, n = re.subn(r'lower="[^"]*"', 'lower="-1e308"', text)
    text, m = re.subn(r'upper="[^"]*"', 'upper="1e308"', text)
    assert n and m
    path = tmp_path / "huge_limits.urdf"
    path.write_text(text)
    r = run_cli("parity", "--urdf", path, "--out", tmp_path / "b", "--samples", "3",
                "--quiet")
    assert r.returncode == 0, r.stdout + r.stderr
    b = api.read_bundle(tmp_path / "b")
    q = b.arrays["in/double_pendulum/q"]
    assert np.all((q >= UNBOUNDED_ANGLE[0]) & (q <= UNBOUNDED_ANGLE[1])), q
    assert MAX_SAMPLED_SPAN < 1e308


def test_npy_headers_read_as_numpy_reads_them(tmp_path):
    """The .npy header fast path gives numpy's (shape, fortran order, dtype) for every
    array numpy writes, and a header it does not recognise still goes to numpy's parser
    (which raises for a bad one)."""
    import io

    import numpy as np

    from harness.core.strict import npy_header_1_0

    arrays = [np.zeros(()), np.arange(5), np.ones((3, 4), order="F"), np.zeros((2, 0, 7)),
              np.array(["ab", "c"]), np.array([True, False]), np.zeros((10**6 // 8,)),
              np.zeros((1, 2, 3, 4), dtype=">i4"), np.array([1 + 2j])]
    for a in arrays:
        buf = io.BytesIO()
        np.lib.format.write_array(buf, a, version=(1, 0))
        raw = buf.getvalue()
        want = np.lib.format.read_array_header_1_0(io.BytesIO(raw[8:]))
        got = npy_header_1_0(io.BytesIO(raw[8:]))
        assert got == want and got[2] == want[2], (a.dtype, a.shape)
    odd = b"{'shape': (3,), 'fortran_order': False, 'descr': '<f8'}"
    odd = len(odd + b"\n").to_bytes(2, "little") + odd + b"\n"
    assert npy_header_1_0(io.BytesIO(odd)) == ((3,), False, np.dtype("<f8"))
    bad = b"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'x': 1}\n"
    with pytest.raises(ValueError):
        npy_header_1_0(io.BytesIO(len(bad).to_bytes(2, "little") + bad))
