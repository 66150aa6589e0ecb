"""Bad input, fuzzed (hypothesis): every loader either succeeds or raises BadInput with
one line that names the file; the CLI turns that into exit code 2 and no traceback.
Nothing from an input is evaluated and np.load never accepts pickles."""
from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixtures import catalog
from fixtures.export import to_mjcf, to_urdf
from harness import api, cli
from harness.core.errors import BadInput
from harness.evidence import bundle as evidence
from harness.model.mjcf_import import load_mjcf
from harness.model.prepared import prepare_fixture
from harness.model.urdf_import import load_urdf
from harness.stages import runner

FUZZ = settings(max_examples=200, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow,
                                       HealthCheck.function_scoped_fixture])
VALID_URDF = to_urdf(catalog.get("chain7"))
VALID_MJCF = to_mjcf(catalog.get("tree_floating"))
NASTY = ["nan", "inf", "-inf", "1e309", "-1e308", "1e-320", "", "0x10", "1_0", "--1",
         "<b>", "é", "\u202e", "${x}", "__import__('os')", "9" * 400]


def _mutations(text: str):
    """Strategies that damage a valid document the way real files get damaged."""
    n = len(text)
    truncate = st.integers(0, n - 1).map(lambda k: text[:k])
    nums = [i for i, c in enumerate(text) if c.isdigit()]
    replace_num = st.tuples(st.sampled_from(nums), st.sampled_from(NASTY)).map(
        lambda a: text[:a[0]] + a[1] + text[a[0] + 1:])
    names = [i for i in range(n) if text.startswith('name="', i)]
    rename = st.tuples(st.sampled_from(names), st.sampled_from(
        ['"', "<script>alert(1)</script>", "a\x00b", " ", "j1", "link1", "&amp;", "\u00e9\u4e2d",
         "root_joint", "world"])).map(lambda a: text[:a[0] + 6] + a[1] + text[a[0] + 6:])
    splice = st.tuples(st.integers(0, n), st.binary(max_size=40)).map(
        lambda a: text[:a[0]] + a[1].decode("latin-1") + text[a[0]:])
    garbage = st.binary(max_size=300).map(lambda b: b.decode("latin-1"))
    entity = st.just('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa">]><robot name="&a;"/>')
    return st.one_of(truncate, replace_num, rename, splice, garbage, entity)


def _check_loader(load, tmp_path, text, suffix):
    path = tmp_path / f"m{suffix}"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    try:
        spec = load(str(path))
    except BadInput as e:
        msg = str(e)
        assert "\n" not in msg and msg.startswith(str(path)), msg
        return None
    # whatever loads must be a valid spec that exports and re-validates
    spec.validate()
    to_urdf(spec), to_mjcf(spec)
    return spec


@FUZZ
@given(text=_mutations(VALID_URDF))
def test_urdf_loader_fuzz(tmp_path, text):
    _check_loader(load_urdf, tmp_path, text, ".urdf")


@FUZZ
@given(text=_mutations(VALID_MJCF))
def test_mjcf_loader_fuzz(tmp_path, text):
    _check_loader(load_mjcf, tmp_path, text, ".xml")


def _damage(data: bytes, how: str, pos: float, junk: bytes):
    """Byte-level damage: truncate at pos, flip the byte at pos, or replace with junk.
    None for how == "json-edit" (the caller edits the document itself)."""
    k = int(pos * (len(data) - 1))
    if how == "truncate":
        return data[:k]
    if how == "flip":
        return data[:k] + bytes([data[k] ^ (junk[0] | 1)]) + data[k + 1:]
    if how == "random":
        return junk
    return None


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    res = runner.run([prepare_fixture("double_pendulum")], ["pinocchio", "drake"], samples=2)
    out = tmp_path_factory.mktemp("bundle") / "b"
    evidence.write_bundle(out, res, {}, ["fuzz"], api.evidence_hooks())
    return out


@FUZZ
@given(which=st.sampled_from(["manifest.json", "records.json", "arrays.npz"]),
       how=st.sampled_from(["truncate", "flip", "random", "json-edit"]),
       pos=st.floats(0, 1), junk=st.binary(min_size=1, max_size=64))
def test_bundle_reader_and_verify_fuzz(tmp_path, pristine, capsys, which, how, pos, junk):
    b = tmp_path / "b"
    if b.exists():
        shutil.rmtree(b)
    shutil.copytree(pristine, b)
    f = b / which
    original = f.read_bytes()
    data = _damage(original, how, pos, junk)
    if data is not None:
        pass
    elif which != "arrays.npz":
        try:
            obj = json.loads(original)
            target = obj[0] if isinstance(obj, list) else obj
            key = sorted(target)[int(pos * (len(target) - 1))]
            target[key] = [None, "x", 1e308, -1, {"a": 1}, "<script>"][junk[0] % 6]
            data = json.dumps(obj).encode()
        except (ValueError, TypeError, KeyError):
            data = junk
    else:
        buf = io.BytesIO()
        np.savez(buf, evil=np.array([object()], dtype=object))
        data = buf.getvalue()
    f.write_bytes(data)
    rc = cli.main(["verify", str(b)])
    err = capsys.readouterr().err
    assert rc in (1, 2), "a damaged bundle verified"
    assert "Traceback" not in err
    if rc == 2:
        lines = [l for l in err.splitlines() if l]
        assert len(lines) == 1 and str(b) in lines[0], err


def test_cli_fuzzed_urdf_gives_exit_2_and_one_line(tmp_path, capsys):
    """A few damaged files through the whole CLI (in-process; same code path)."""
    for i, text in enumerate([VALID_URDF[:500], "\x00\x01garbage", VALID_URDF.replace(
            'value="1.8"', 'value="nan"')]):
        p = tmp_path / f"bad{i}.urdf"
        p.write_text(text, encoding="latin-1")
        rc = cli.main(["parity", "--urdf", str(p), "--out", str(tmp_path / "o"), "--quiet"])
        err = capsys.readouterr().err
        assert rc == 2 and err.count("\n") == 1 and str(p) in err, err
        assert not (tmp_path / "o").exists()


@pytest.fixture(scope="module")
def candidate_files(tmp_path_factory):
    """A valid candidate (manifest + arrays) written by `harness synth`."""
    from tests.conftest import run_cli

    d = tmp_path_factory.mktemp("cand")
    proc = run_cli("synth", "chain7", "--out", d / "c.json", "--duration", "0.2")
    assert proc.returncode == 0, proc.stderr
    return d / "c.json"


@FUZZ
@given(which=st.sampled_from(["json", "npz"]),
       how=st.sampled_from(["truncate", "flip", "random", "json-edit"]),
       pos=st.floats(0, 1), junk=st.binary(min_size=1, max_size=64))
def test_candidate_loader_fuzz(tmp_path, candidate_files, capsys, which, how, pos, junk):
    from harness.model import candidate as cd

    d = tmp_path / "c"
    if d.exists():
        shutil.rmtree(d)
    d.mkdir()
    for suffix in (".json", ".npz"):
        shutil.copy(candidate_files.with_suffix(suffix), d / f"c{suffix}")
    f = d / f"c.{which}"
    original = f.read_bytes()
    data = _damage(original, how, pos, junk)
    if data is not None:
        pass
    elif which == "json":
        obj = json.loads(original)
        key = sorted(obj)[int(pos * (len(obj) - 1))]
        obj[key] = [None, "x", 1e308, -1, {"a": 1}, ["<script>"], True][junk[0] % 7]
        data = json.dumps(obj).encode()
    else:
        buf = io.BytesIO()
        np.savez(buf, q0=np.array([object()], dtype=object))
        data = buf.getvalue()
    f.write_bytes(data)
    try:
        cand = cd.load(d / "c.json")
    except BadInput as e:
        msg = str(e)
        assert "\n" not in msg and str(d) in msg, msg
        return
    # a damage that still loads must leave a candidate whose arrays are all finite
    for a in (cand.q0, cand.v0, cand.t, cand.tau):
        assert np.all(np.isfinite(a))


# ---- C3D captures (harness/capture): byte damage and content damage ----------------
@pytest.fixture(scope="module")
def c3d_bases(tmp_path_factory):
    """Two valid captures: the bundled driver swing and a short synthetic one (mm)."""
    from harness.capture.synthetic import kinematic_swing, write_c3d

    d = tmp_path_factory.mktemp("c3d")
    labels, X, _ = kinematic_swing(rate_hz=120.0, duration_s=1.8)
    small = write_c3d(d / "small.c3d", labels, X, 120.0, "mm", "+y")
    bundled = Path(__file__).resolve().parents[2] / "data" / "swing" / "driver.c3d"
    return {"small": small.read_bytes(), "bundled": bundled.read_bytes(),
            "labels": labels, "X": X}


C3D_NAMES = ["<script>alert(1)</script>", "é中\u202e", "", " ", "a\"b'c", "HeadTop",
             "Marker_2:2:1", "x" * 300, "&amp;<b>"]
C3D_VALUES = [np.nan, np.inf, -np.inf, 1e30, -1e12, 1e5, 0.0, 3.4e38]


def _check_capture(path):
    from harness.capture.ingest import ingest

    try:
        cap = ingest(path)
    except BadInput as e:
        msg = str(e)
        assert "\n" not in msg and msg.startswith(str(path)), msg
        return None
    finite = cap.X[np.isfinite(cap.X)]
    assert finite.size and np.abs(finite).max() <= 1e4
    assert not np.isinf(cap.X).any()
    assert len(set(cap.labels)) == len(cap.labels)
    return cap


@FUZZ
@given(kind=st.sampled_from(["bytes", "content"]),
       base=st.sampled_from(["small", "bundled"]),
       how=st.sampled_from(["truncate", "flip", "random", "header"]),
       pos=st.floats(0, 1), junk=st.binary(min_size=1, max_size=600),
       edit=st.sampled_from(["value", "label", "duplicate", "drop"]),
       which=st.integers(0, 10 ** 6), value=st.sampled_from(C3D_VALUES),
       name=st.sampled_from(C3D_NAMES))
def test_c3d_loader_fuzz(tmp_path, c3d_bases, kind, base, how, pos, junk, edit, which,
                         value, name):
    from harness.capture.synthetic import write_c3d

    path = tmp_path / "c.c3d"
    if kind == "bytes":
        data = c3d_bases[base]
        if how == "header":     # the parameter section, where ezc3d is most fragile
            k = 512 + int(pos * 3000)
            data = data[:k] + bytes([data[k] ^ (junk[0] | 1)]) + data[k + 1:]
        else:
            data = _damage(data, how, pos, junk)
        path.write_bytes(data)
    else:
        labels, X = list(c3d_bases["labels"]), c3d_bases["X"].copy()
        m = which % len(labels)
        if edit == "value":
            f = (which // len(labels)) % X.shape[0]
            X[f:f + 1 + which % 5, m, which % 3] = value
        elif edit == "label":
            labels[m] = name
        elif edit == "duplicate":
            labels[m] = labels[(m + 1) % len(labels)]
        else:
            keep = [i for i in range(len(labels)) if i != m]
            labels, X = [labels[i] for i in keep], X[:, keep]
        with np.errstate(invalid="ignore", over="ignore"):
            write_c3d(path, labels, X, 120.0, "m", "+y")
    _check_capture(path)


def test_cli_damaged_c3d_gives_exit_2_and_one_line(tmp_path, c3d_bases, capsys):
    path = tmp_path / "bad.c3d"
    path.write_bytes(c3d_bases["small"][:700])
    assert cli.main(["capture", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(path) in err and "Traceback" not in err
