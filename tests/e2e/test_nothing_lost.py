"""Nothing lost: SIGKILL during a bundle write leaves the old bundle intact and valid;
two runs with the same seed give identical records and arrays."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np

from harness import api
from tests.conftest import ROOT, run_cli


def test_sigkill_while_writing_keeps_the_old_bundle(tmp_path):
    out = tmp_path / "bundle"
    # two engines: what is under test is the write, and each attempt is a whole qualify
    engines = ("--engines", "mujoco,pinocchio")
    first = run_cli("qualify", "--out", out, "--quiet", *engines)
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    killed_during_write = 0
    for attempt in range(3):  # each is a whole qualify; the kill lands in the write
        proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "qualify", "--out",
                                 str(out), "--quiet", "--seed", str(attempt + 1), *engines],
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # wait for the writer's temporary folder to appear, then kill it mid-write
        deadline = time.monotonic() + 600  # qualify computes for ~45-75 s before it writes
        while time.monotonic() < deadline and proc.poll() is None:
            if any(p.name.startswith(".bundle.tmp-") for p in tmp_path.iterdir()):
                os.kill(proc.pid, signal.SIGKILL)
                killed_during_write += 1
                break
            time.sleep(0.0005)
        proc.wait()
        now = {p.name: p.read_bytes() for p in out.iterdir()}
        # either the old bundle, untouched, or (if the kill came after the swap) a whole
        # new one; never a mix, and always one that verifies
        assert now == before or json.loads(now["manifest.json"])["seed"] == attempt + 1
        assert api.verify(out) == []
        before = now
    assert killed_during_write >= 2, "the kill never landed inside the write"
    # a later write cleans the dead writers' temporary folders
    assert run_cli("qualify", "--out", out, "--quiet", *engines).returncode == 0
    assert [p.name for p in tmp_path.iterdir()] == ["bundle"]


def test_same_seed_gives_identical_records_and_arrays(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        assert run_cli("qualify", "--out", out, "--quiet", "--seed", "11").returncode == 0
    assert (a / "records.json").read_bytes() == (b / "records.json").read_bytes()
    with np.load(a / "arrays.npz", allow_pickle=False) as za, \
            np.load(b / "arrays.npz", allow_pickle=False) as zb:
        assert sorted(za.files) == sorted(zb.files)
        for k in za.files:
            assert za[k].dtype == zb[k].dtype and np.array_equal(za[k], zb[k]), k
    ma = json.loads((a / "manifest.json").read_text())
    mb = json.loads((b / "manifest.json").read_text())
    differ = {k for k in ma if ma[k] != mb[k]}
    assert differ <= {"created", "command_line", "manifest_sha256"}, differ  # seal of the rest
    # and the seed matters (a cheaper run than a third qualify: the same sampler)
    c, d = tmp_path / "c", tmp_path / "d"
    for out, seed in ((c, "11"), (d, "12")):
        assert run_cli("parity", "--fixture", "pendulum", "--out", out, "--quiet",
                       "--seed", seed).returncode == 0
    assert (c / "records.json").read_bytes() != (d / "records.json").read_bytes()
