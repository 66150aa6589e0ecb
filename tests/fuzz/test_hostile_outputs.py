"""Hostile outputs: names and places a user already holds. The harness replaces only what
it wrote (the output-folder and output-file rules of harness/core/io.py), never removes a
user's file that happens to share the name of its lock or temporaries, refuses an output
it cannot write in one line (exit 2, never 3), leaves no lock behind on SIGTERM, and
writes the reports' chart library as a copy, not a link to the installed package."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from harness.core import figures
from tests.conftest import ROOT, run_cli

STAGES = ["--stages", "model_identity"]  # the cheapest real run that writes a bundle


def _one_line_refusal(p: subprocess.CompletedProcess[str], *names: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stderr.count("\n") == 1 and "internal error" not in p.stderr, p.stderr
    for n in names:
        assert n in p.stderr, p.stderr


def test_synth_refuses_to_replace_a_users_npz_beside_the_manifest(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "cx.npz").write_bytes(b"the user's arrays")
    p = run_cli("synth", "chain7", "--out", out / "cx.json")
    _one_line_refusal(p, "cx.npz", "--out")
    assert (out / "cx.npz").read_bytes() == b"the user's arrays"
    assert sorted(x.name for x in out.iterdir()) == ["cx.npz"]
    # its own candidate is replaced as before
    (out / "cx.npz").unlink()
    assert run_cli("synth", "chain7", "--out", out / "cx.json").returncode == 0
    p = run_cli("synth", "chain7", "--out", out / "cx.json")
    assert p.returncode == 0, p.stderr


def test_synth_refuses_a_users_json_and_a_place_under_a_file(tmp_path):
    (tmp_path / "cx.json").write_text('{"mine": 1}\n')
    p = run_cli("synth", "chain7", "--out", tmp_path / "cx.json")
    _one_line_refusal(p, "cx.json")
    assert (tmp_path / "cx.json").read_text() == '{"mine": 1}\n'
    (tmp_path / "afile").write_text("x")
    p = run_cli("synth", "chain7", "--out", tmp_path / "afile" / "c.json")
    _one_line_refusal(p, "afile")


def test_users_files_named_like_the_lock_and_temporaries_are_kept(tmp_path):
    dead = 4_000_000  # above Linux's pid_max: no such process
    (tmp_path / ".LK.lock").write_text("the user's lock notes\n")
    (tmp_path / f".TN.tmp-{dead}-notes").write_text("the user's notes\n")
    (tmp_path / f".ON.old-{dead}").mkdir()
    (tmp_path / f".ON.old-{dead}" / "keep.txt").write_text("the user's folder\n")
    before = {p.name for p in tmp_path.iterdir()}
    for name in ("LK", "TN", "ON"):
        p = run_cli("parity", "--fixture", "chain7", *STAGES, "--out", tmp_path / name,
                    "--quiet")
        assert p.returncode == 0, p.stderr
    assert {p.name for p in tmp_path.iterdir()} == before | {"LK", "TN", "ON"}
    assert (tmp_path / ".LK.lock").read_text() == "the user's lock notes\n"
    assert (tmp_path / f".TN.tmp-{dead}-notes").read_text() == "the user's notes\n"
    assert (tmp_path / f".ON.old-{dead}" / "keep.txt").read_text() == "the user's folder\n"


def test_a_file_output_under_a_missing_folder_is_written_not_an_internal_error(tmp_path):
    """The check accepts a file whose missing parents can be created; the writer creates
    them (it used to fail after the work with exit 3)."""
    cap = ROOT / "data" / "swing" / "driver.c3d"
    dest = tmp_path / "missing" / "deeper" / "x.json"
    p = run_cli("capture", cap, "--json", dest)
    assert p.returncode == 0, p.stderr
    assert dest.is_file()
    page = tmp_path / "missing2" / "r.html"
    p = run_cli("report", ROOT / "evidence" / "qualify-ci", "--out", page, "--quiet")
    assert p.returncode == 0, p.stderr
    assert page.is_file()


def test_sigterm_leaves_no_lock_and_no_temporaries(tmp_path):
    out = tmp_path / "b"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-m", "harness.launch", "parity", "--fixture",
                             "all", "--out", str(out), "--quiet"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lock = tmp_path / ".b.lock"
    deadline = time.monotonic() + 120
    while not lock.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert lock.exists(), "the run never took its lock"
    time.sleep(1.0)  # well inside the run (the stages take tens of seconds)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == [], err
    # and the next run is not blocked
    p = run_cli("parity", "--fixture", "chain7", *STAGES, "--out", out, "--quiet")
    assert p.returncode == 0, p.stderr


SIGTERM_IN_A_FINALISER = """
import os, signal, sys, time
from harness import cli

class Closes:
    def __del__(self):  # the signal arrives while Python runs a finaliser
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.2)

def command(args):
    Closes()
    time.sleep(0.5)
    open(sys.argv[1], "w").write("finished")  # reached only if the signal was lost
    return 0

cli.COMMANDS["engines"] = command
sys.exit(cli.main(["engines"]))
"""


def test_a_sigterm_that_lands_in_a_finaliser_still_ends_the_command(tmp_path):
    done = tmp_path / "finished"
    p = subprocess.run([sys.executable, "-c", SIGTERM_IN_A_FINALISER, str(done)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 143, p.stderr
    assert not done.exists(), p.stderr
    assert "Exception ignored" not in p.stderr, p.stderr


def test_report_chart_library_is_a_copy_not_a_link_to_the_package(tmp_path):
    out = tmp_path / "b"
    p = run_cli("parity", "--fixture", "chain7", *STAGES, "--out", out, "--quiet")
    assert p.returncode == 0, p.stderr
    src = Path(figures.plotly_js_path())
    copy = out / figures.ASSET
    assert copy.read_bytes() == src.read_bytes()
    assert os.stat(copy).st_ino != os.stat(src).st_ino and os.stat(copy).st_nlink == 1
