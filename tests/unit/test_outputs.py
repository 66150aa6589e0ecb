"""Outputs never destroy data: the output-folder rule (harness/core/io.py), the writer's
lock and the check at the swap, outputs checked before any work, a reader that goes away,
and nothing left behind (temporary files, stale folders of killed runs, 0700 folders, a
log file in the working directory)."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import api
from harness.core import io
from harness.core.errors import BadInput
from harness.evidence import bundle as evidence
from harness.model import registry
from harness.model.prepared import prepare_fixture
from tests.conftest import ROOT, run_cli

CAPTURE = ROOT / "data" / "swing" / "driver.c3d"
STAGES = ["model_identity"]  # the cheapest real run that writes a bundle


def _tree(folder: Path) -> dict:
    """{relative path: ("file", bytes) | ("dir", mode) | ("link", target)}, byte for byte."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = Path(root) / name
            rel = str(p.relative_to(folder))
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_dir():
                out[rel] = ("dir", stat.S_IMODE(p.lstat().st_mode))
            else:
                out[rel] = ("file", p.read_bytes())
    return out


def _beside(folder: Path) -> list:
    """Names in the parent folder other than ``folder`` itself (temp folders, lock files)."""
    return sorted(p.name for p in folder.parent.iterdir() if p.name != folder.name)


@pytest.fixture(scope="module")
def bundle_files(tmp_path_factory) -> dict:
    """{name: bytes} of a real evidence bundle (pendulum, identity stage)."""
    out = tmp_path_factory.mktemp("real") / "b"
    api.parity(["pendulum"], out=out, stages=STAGES)
    return {p.name: p.read_bytes() for p in out.iterdir()}


# ----- the rule: only what the harness wrote is replaced ----------------------------------
def test_parity_refuses_a_folder_holding_user_files(tmp_path):
    """The reproduction: a manifest.json that is not a bundle's, beside the user's code."""
    w = tmp_path / "w"
    (w / "src").mkdir(parents=True)
    (w / "manifest.json").write_text("{}\n")
    (w / "src" / "app.js").write_text("x\n")
    before = _tree(w)
    p = run_cli("parity", "--fixture", "pendulum", "--out", w)
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and "refusing" in p.stderr and str(w) in p.stderr
    assert "[" not in p.stderr  # no progress line: refused before any work
    assert _tree(w) == before and _beside(w) == []


@pytest.mark.parametrize("command, marker, extra", [
    (["fit", "--problem", "pendulum", "--n", "50"], "fit.json", "notes.txt"),
    (["sweep", "contact", "--quick", "--quiet"], "sweep.json", "data.csv"),
    (["swing", str(CAPTURE), "--quick", "--quiet"], "fit/fit.json", "fit/mine.txt"),
])
def test_other_outputs_refuse_a_folder_they_did_not_write(tmp_path, command, marker, extra):
    out = tmp_path / "o"
    for rel, text in ((marker, "{}\n"), (extra, "mine\n")):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    before = _tree(out)
    p = run_cli(*command, "--out", out)
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and "refusing" in p.stderr
    assert _tree(out) == before and _beside(out) == []


def test_a_bundle_the_harness_wrote_is_replaced(tmp_path, bundle_files):
    out = tmp_path / "b"
    out.mkdir()
    for name, blob in bundle_files.items():
        (out / name).write_bytes(blob)
    o = api.parity(["pendulum"], out=out, stages=STAGES, seed=3)
    assert o.path == out and json.loads((out / "manifest.json").read_text())["seed"] == 3
    assert api.verify(out) == [] and _beside(out) == []
    # the same bundle with one byte of its manifest changed is no longer the harness's
    m = json.loads((out / "manifest.json").read_text())
    m["seed"] = 4
    (out / "manifest.json").write_text(json.dumps(m))
    before = _tree(out)
    with pytest.raises(BadInput, match="manifest.json"):
        api.parity(["pendulum"], out=out, stages=STAGES)
    assert _tree(out) == before and _beside(out) == []


NAMES = st.sampled_from(["manifest.json", "arrays.npz", "records.json", "index.html",
                         "timings.json", "fit.json", "sweep.json", "src", "app.js", ".git",
                         "notes.txt", "replay"]) | st.text(
    alphabet="abcXYZ019._-", min_size=1, max_size=8).filter(lambda s: s not in (".", ".."))
ADDITION = st.tuples(st.lists(NAMES, min_size=1, max_size=3),
                     st.sampled_from(["file", "dir", "link"]), st.binary(max_size=16))
MARKER = st.one_of(
    st.none(),  # the real manifest
    st.just(b"{}"), st.binary(max_size=40),
    st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5),
                    max_size=4).map(lambda d: json.dumps(d).encode()),
    st.sampled_from(["seed", "samples", "git_commit"]))  # one field of the real one edited


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=st.sampled_from(["empty", "bundle", "none"]),
       dropped=st.sets(st.sampled_from(["arrays.npz", "records.json", "index.html",
                                        "manifest.json"])),
       marker=MARKER, additions=st.lists(ADDITION, max_size=4))
def test_only_harness_written_bundles_are_ever_replaced(bundle_files, base, dropped, marker,
                                                       additions):
    """Random folder contents at --out: random names, nested folders, symbolic links, a
    marker or none, valid or invalid marker JSON. A folder is replaced only if it is empty
    or is a bundle the harness wrote (some of its files possibly removed, nothing added or
    edited); anything else is refused with BadInput and left byte for byte as it was,
    with nothing left beside it. (A user's file put back under the name of a file the
    bundle lacks is indistinguishable from the harness's and is not generated.)"""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "out"
        out.mkdir()
        ours = base == "empty"
        if base == "bundle":
            for name, blob in bundle_files.items():
                if name not in dropped:
                    (out / name).write_bytes(blob)
            ours = "manifest.json" not in dropped
            if marker is not None and "manifest.json" not in dropped:
                ours = False
                if isinstance(marker, str):
                    m = json.loads(bundle_files["manifest.json"])
                    m[marker] = m[marker] + 1 if isinstance(m[marker], int) else m[marker] + "x"
                    marker = json.dumps(m, indent=1).encode()
                (out / "manifest.json").write_bytes(marker)
        elif base == "none" and isinstance(marker, bytes):
            (out / "manifest.json").write_bytes(marker)
        for parts, kind, blob in additions:
            target = out.joinpath(*parts)
            if base == "bundle" and len(parts) == 1 and kind == "file" and \
                    parts[0] in evidence.OUTPUT.files:
                continue
            if os.path.lexists(target) or any(
                    os.path.lexists(out.joinpath(*parts[:i])) and
                    not out.joinpath(*parts[:i]).is_dir() for i in range(1, len(parts))):
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if kind == "file":
                target.write_bytes(blob)
            elif kind == "dir":
                target.mkdir()
            else:
                target.symlink_to("/etc/hostname")
            ours = False
        if not any(out.iterdir()):
            ours = True  # an empty folder: nothing to lose
        before = _tree(out)
        try:
            io.write_folder_atomic(out, bundle_files, evidence.OUTPUT)
            replaced = True
        except BadInput:
            replaced = False
        assert replaced == ours, (base, dropped, marker, additions, before)
        if replaced:
            assert _tree(out) == {k: ("file", v) for k, v in bundle_files.items()}
        else:
            assert _tree(out) == before
        assert _beside(out) == []


# ----- the lock and the check at the swap ---------------------------------------------------
def test_a_folder_created_during_the_run_is_not_swapped_out(tmp_path):
    out = tmp_path / "b"
    made = []

    def user_creates_the_folder(msg):
        if not made:
            out.mkdir()
            (out / "mine.txt").write_text("user data")
            made.append(msg)

    with pytest.raises(BadInput, match="mine.txt"):
        api.parity(["pendulum"], out=out, stages=STAGES, progress=user_creates_the_folder)
    assert made and _tree(out) == {"mine.txt": ("file", b"user data")}
    assert _beside(out) == []


def test_a_second_writer_is_refused(tmp_path):
    """Two api writers (the second starts inside the first) and a CLI writer while this
    process holds the folder: the second is refused with one line; the first completes."""
    out = tmp_path / "b"
    second = []

    def start_a_second_writer(msg):
        if not second:
            try:
                api.parity(["pendulum"], out=out, stages=STAGES)
                second.append("succeeded")
            except BadInput as e:
                second.append(str(e))

    o = api.parity(["pendulum"], out=out, stages=STAGES, progress=start_a_second_writer)
    assert "another harness run is writing this folder" in second[0]
    assert o.exit_code == 0 and api.verify(out) == [] and _beside(out) == []
    with io.output_folder(out, evidence.OUTPUT):
        assert _beside(out) == [".b.lock"]
        p = run_cli("parity", "--fixture", "pendulum", "--out", out)
        assert p.returncode == 2 and p.stderr.count("\n") == 1
        assert "another harness run is writing this folder" in p.stderr
    assert _beside(out) == [] and api.verify(out) == []


# ----- outputs checked before any work; a reader that goes away --------------------------
def test_output_files_and_unwritable_folders_are_refused_before_any_work(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (tmp_path / "f").write_text("a file")
    bundle = tmp_path / "b"
    api.parity(["pendulum"], out=bundle, stages=STAGES)
    cases = [
        (["parity", "--fixture", "pendulum", "--out", tmp_path / "o", "--junit", d],
         "--junit"),
        (["report", bundle, "--out", d], "--out"),
        (["capture", CAPTURE, "--json", d], "--json"),
        (["parity", "--fixture", "pendulum", "--out", "/proc/harness-out"], "/proc"),
        (["parity", "--fixture", "pendulum", "--out", tmp_path / "f" / "o"], "not a folder"),
        (["fit", "--problem", "pendulum", "--n", "50", "--out", tmp_path / "f" / "o"],
         "not a folder"),
    ]
    before = _tree(tmp_path)
    for args, word in cases:
        p = run_cli(*args)
        assert p.returncode == 2, (args, p.stderr)
        assert p.stderr.count("\n") == 1 and word in p.stderr, p.stderr
        assert "[" not in p.stderr and not p.stdout, (args, p.stdout)  # no work done
        assert _tree(tmp_path) == before, args  # nothing written, no temp file
    assert [p.name for p in Path("/proc").glob(".harness-out*")] == []


@pytest.mark.parametrize("args", [["engines"], ["parity", "--fixture", "pendulum",
                                                "--stages", "model_identity"]])
def test_a_reader_that_goes_away_is_no_error(tmp_path, args):
    """`harness ... | head -1`: the reader has closed the pipe before anything is written;
    the command runs to its own exit code, without a traceback or an internal error."""
    if args[0] == "parity":
        args = [*args, "--out", str(tmp_path / "b")]
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([sys.executable, "-m", "harness.cli", *args], stdout=w,
                           stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=300)
    finally:
        os.close(w)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr and "harness: error" not in p.stderr, p.stderr
    if args[0] == "parity":
        assert api.verify(tmp_path / "b") == []


# ----- leftovers ---------------------------------------------------------------------------
def test_a_failed_file_write_leaves_no_temp_file(tmp_path):
    with pytest.raises(TypeError):
        io.write_bytes_atomic(tmp_path / "r.json", "not bytes")
    (tmp_path / "d").mkdir()
    with pytest.raises(BadInput, match="is a folder"):
        io.write_bytes_atomic(tmp_path / "d", b"x")
    from harness.evidence.junit import write_junit

    with pytest.raises(BadInput, match="is a folder"):
        write_junit(tmp_path / "d", [], {})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_temporaries_of_a_killed_swing_are_removed_on_the_next_run(tmp_path):
    out = tmp_path / "sw"
    dead = tmp_path / f".sw.tmp-{_dead_pid()}-{'ab' * 8}"  # as the harness names them
    (dead / "fit").mkdir(parents=True)
    (dead / "fit" / "fit.json").write_text("{}")
    live = tmp_path / f".sw.tmp-{os.getpid()}-{'ab' * 8}"  # a writer still running: kept
    live.mkdir()
    bad = tmp_path / "bad.c3d"
    bad.write_bytes(CAPTURE.read_bytes()[:600])
    p = run_cli("swing", bad, "--out", out, "--quiet")
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert sorted(x.name for x in tmp_path.iterdir()) == [live.name, "bad.c3d"]


def test_swap_is_one_exchange(tmp_path):
    """swap_in (bundles, fits, sweeps and the swing folder): the target never disappears
    while it is replaced (a reader polling it during 300 swaps always finds a whole
    folder), the new folder is the one that was built (same inode), the old one is gone."""
    import threading

    kind = io.OutputKind("a test folder", "m.json", lambda p: json.loads(p.read_text()),
                         frozenset({"m.json", "data.txt"}))
    out = tmp_path / "out"
    io.write_folder_atomic(out, {"m.json": b"0", "data.txt": b"0"}, kind)
    missing, stop = [], threading.Event()

    def reader():
        while not stop.is_set():
            try:
                (out / "m.json").read_bytes()
            except FileNotFoundError as e:
                missing.append(e.filename)

    t = threading.Thread(target=reader)
    t.start()
    try:
        for i in range(1, 301):
            with io.output_folder(out, kind):
                tmp = io.temp_folder(out)
                (tmp / "m.json").write_bytes(b"%d" % i)
                (tmp / "data.txt").write_bytes(b"%d" % i)
                ino = tmp.lstat().st_ino
                io.swap_in(tmp, out, kind)
                assert out.lstat().st_ino == ino
    finally:
        stop.set()
        t.join()
    assert missing == [] and _beside(out) == [] and (out / "m.json").read_bytes() == b"300"


def test_bundle_folders_honour_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        api.parity(["pendulum"], out=tmp_path / "b", stages=STAGES)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "b").stat().st_mode) == 0o755


def test_no_engine_writes_into_the_working_directory(tmp_path, monkeypatch):
    """A native rollout from a huge velocity (1e11 rad/s) makes an engine warn that the
    simulation is unstable; no warning goes to a log file in the working directory."""
    monkeypatch.chdir(tmp_path)
    model = prepare_fixture("pendulum")
    tried = 0
    for name in registry.ENGINES:
        if not registry.probe(name).available:
            continue
        ad = registry.adapter_class(name)(model)
        if not callable(getattr(ad, "native_rollout", None)):
            continue
        ad.native_rollout(np.zeros(ad.nq), np.full(ad.nv, 1e11), np.array([0.0, 1e-6]),
                          lambda k, t: np.zeros(ad.nv))
        tried += 1
    assert tried and list(tmp_path.iterdir()) == []


def test_default_outputs_are_ignored_by_git():
    for path in ("reports/diagnose/index.html", "reports/parity/index.html",
                 "reports/replay/index.html", "reports/.latest.lock"):
        p = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", path])
        assert p.returncode == 0, path
