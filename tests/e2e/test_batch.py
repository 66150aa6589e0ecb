"""``harness parity --batch`` and ``harness swing --batch`` (harness/batch/): real runs of the
installed CLI on a Dask LocalCluster of 2 workers. Each bundle of a batch is checked
against a direct ``harness parity`` run of the same model (records identical), survey.json
against the bundles (counts recounted from records.json, nq/nv from the manifest), a broken
URDF is an error row (exit 1, the batch is not lost), bad input exits 2 with nothing
written, and a folder the harness did not write is refused."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from harness import api, cli
from harness.batch import inputs, survey
from harness.core.errors import BadInput
from harness.core.io import check_output_folder
from harness.evidence import bundle as evidence
from tests.conftest import ROOT, run_cli

GOLDEN = ROOT / "fixtures" / "golden"
SAMPLES = "4"
RECORD_STATUSES = ("passed", "failed", "error", "not_scored", "not_provided", "unconverged",
                   "informational")


def _records(bundle: Path) -> list:
    return json.loads((bundle / "records.json").read_text())


# one body on a ball joint with armature: every engine holds it (Drake's adapter adds the
# armature its ball joint cannot carry)
BALL_ARMATURE = """<mujoco model="ball_armature">
  <worldbody>
    <body name="link" pos="0 0 1">
      <joint name="shoulder" type="ball" armature="0.01"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""

# a link of 1e-20 kg between two hinges: Pinocchio, Crocoddyl, Drake and OpenSim hold it,
# MuJoCo refuses a moving body lighter than its mjMINVAL (1e-15) — a genuine engine error,
# fixed base and floating alike
TINY_MASS = """<robot name="tiny_mass">
  <link name="base"><inertial><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="mid"><inertial><mass value="1e-20"/>
    <inertia ixx="1e-22" iyy="1e-22" izz="1e-22" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tip"><inertial><origin xyz="0 0 -0.25"/><mass value="1"/>
    <inertia ixx="0.02" iyy="0.02" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="mid"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="mid"/><child link="tip"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>
"""


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """A folder of three catalog URDFs (two in a subfolder), an MJCF whose ball joint carries
    armature, a URDF MuJoCo refuses (a 1e-20 kg link) and one broken URDF, each fixed and
    floating, run as a batch on 2 Dask workers."""
    d = tmp_path_factory.mktemp("batch")
    src = d / "models"
    (src / "arm").mkdir(parents=True)
    shutil.copy(GOLDEN / "pendulum.urdf", src / "pendulum.urdf")
    shutil.copy(GOLDEN / "double_pendulum.urdf", src / "arm" / "double_pendulum.urdf")
    shutil.copy(GOLDEN / "chain7.urdf", src / "arm" / "chain7.urdf")
    (src / "broken.urdf").write_text('<robot name="broken"><link name="a">\n')
    (src / "ball_armature.xml").write_text(BALL_ARMATURE)
    (src / "tiny_mass.urdf").write_text(TINY_MASS)
    (src / "package.xml").write_text("<package><name>not a model</name></package>\n")
    out, js = d / "survey", d / "survey.json"
    proc = run_cli("parity", "--batch", src, "--base", "both", "--workers", "2",
                   "--samples", SAMPLES, "--out", out, "--json", js)
    return proc, src, out, js


def test_batch_writes_one_bundle_per_model_and_a_survey(batch):
    proc, src, out, js = batch
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads((out / "survey.json").read_text())
    summary = json.loads(js.read_text())
    # a broken model is an error row, never a lost batch: exit 1, and the others ran
    assert proc.returncode == 1 == doc["exit_code"] == summary["exit_code"]
    assert doc["qualified"] is False and summary["qualified"] is False
    rows = {r["slug"]: r for r in doc["rows"]}
    names = ["arm__chain7", "arm__double_pendulum", "ball_armature", "broken", "pendulum",
             "tiny_mass"]
    assert sorted(rows) == sorted(names + [n + "@floating" for n in names])
    # refused before any engine runs, one line each: the broken file; the two pendulums
    # once they float (a massless base on one hinge turns about it without moving mass:
    # M is singular); the MJCF once it floats (its ball joint already ties it to the world)
    refused = {"broken": "malformed XML", "broken@floating": "malformed XML",
               "pendulum@floating": "without moving any mass",
               "arm__double_pendulum@floating": "without moving any mass",
               "ball_armature@floating": "ball_armature.xml"}
    for slug, why in refused.items():
        bad = rows[slug]
        assert bad["status"] == "error" and bad["folder"] is None, slug
        assert why in bad["error"] and "\n" not in bad["error"], bad["error"]
        assert not (out / "models" / slug).exists()
    assert doc["counts"]["error"] == len(refused) and doc["counts"]["crashed"] == 0
    assert sorted(p.name for p in (out / "models").iterdir()) == \
        sorted(s for s in rows if s not in refused)
    # an engine that raises on a model: a failed row naming the first error record (MuJoCo
    # refuses a moving body lighter than mjMINVAL)
    engine_errors = []
    for slug, r in rows.items():
        if r["folder"] is None:
            continue
        errs = [x for x in _records(out / r["folder"]) if x["status"] == "error"]
        if errs:
            engine_errors.append(slug)
            assert r["status"] == "failed" and r["error"].startswith(errs[0]["id"] + ": ")
        else:
            assert r["error"] == ""
    assert sorted(engine_errors) == ["tiny_mass", "tiny_mass@floating"]
    for slug in engine_errors:
        assert "mujoco" in rows[slug]["error"] and "mjMINVAL" in rows[slug]["error"]
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "models", "survey.json"]
    assert [s["path"] for s in doc["input"]["skipped"]] == [str(src / "package.xml")]
    # the run names its backend, and prints a line per finished task
    assert "parity batch: Dask LocalCluster (2 workers)" in proc.stderr
    assert doc["backend"]["name"] == "dask" and doc["backend"]["workers"] == 2
    for slug in rows:
        assert f" {slug}: " in proc.stderr, slug
    assert summary["backend"] == "Dask LocalCluster (2 workers)"
    assert summary["counts"] == doc["counts"]
    assert "ERROR     broken: " in proc.stdout


def test_error_cells_drop_the_path_and_fold_what_is_long(batch):
    """A row's error cell: every word of the error but the model's path (which the row's
    first column shows), at most ERROR_SHOWN characters before the fold; survey.json keeps
    the whole message. The broken URDF's row, and a long message made from it."""
    from markupsafe import escape

    from harness.batch.report import ERROR_SHOWN, error_cell

    _, _, out, _ = batch
    doc = json.loads((out / "survey.json").read_text())
    page = (out / "index.html").read_text()
    rows = [r for r in doc["rows"] if r["error"]]
    raised = [r for r in rows if r["status"] == "error"]
    assert raised and all(r["path"] in r["error"] for r in raised)
    long = dict(raised[0], error=raised[0]["error"] + " and more" * 60)
    for r in rows + [long]:
        e = error_cell(r)
        whole = e["short"] + e["rest"]
        assert r["path"] not in whole
        assert whole.split() == [w for w in r["error"].split() if w != r["path"] + ":"]
        assert len(e["short"]) <= ERROR_SHOWN and bool(e["rest"]) == (len(whole) > ERROR_SHOWN)
        if r is not long:
            assert str(escape(e["short"])) in page  # as Jinja escapes it (quotes too)
    assert error_cell(long)["rest"]


def test_survey_rows_agree_with_the_bundles(batch):
    _, _, out, _ = batch
    doc = survey.read_survey(out / "survey.json")
    for r in doc["rows"]:
        if r["status"] == "error":
            continue
        b = out / r["folder"]
        recs = [x for x in _records(b) if x["stage"] != "diagnosis"]
        c = Counter(x["status"] for x in recs)
        assert r["counts"] == {s: c.get(s, 0) for s in RECORD_STATUSES}, r["slug"]
        for stage, cell in r["stages"].items():
            cs = Counter(x["status"] for x in recs if x["stage"] == stage)
            assert cell["counts"] == {s: cs.get(s, 0) for s in RECORD_STATUSES}
        assert set(r["stages"]) == {x["stage"] for x in recs}
        manifest = json.loads((b / "manifest.json").read_text())
        assert (r["nq"], r["nv"]) == (manifest["fixtures"][0]["nq"],
                                      manifest["fixtures"][0]["nv"])
        bundle = api.read_bundle(b)  # read strictly, its seal checked
        v = api.judge_records(bundle.records)
        assert r["worst_rel"] == v.worst_rel and (r["status"] == "qualified") == v.qualified
        assert api.verify(b) == []  # every record recomputes from the bundle's arrays


def test_each_bundle_equals_a_direct_parity_run(batch, tmp_path):
    _, src, out, _ = batch
    for slug, path in (("pendulum", src / "pendulum.urdf"),
                       ("arm__double_pendulum", src / "arm" / "double_pendulum.urdf")):
        direct = tmp_path / slug
        proc = run_cli("parity", "--urdf", path, "--samples", SAMPLES, "--out", direct,
                       "--quiet")
        assert proc.returncode == 0, proc.stderr
        assert _records(out / "models" / slug) == _records(direct), slug
        m = json.loads((out / "models" / slug / "manifest.json").read_text())
        assert m["command_line"][:4] == ["harness", "parity", "--urdf", str(path)]


def test_survey_report_answers_first_and_links_every_bundle(batch):
    _, _, out, _ = batch
    html = (out / "index.html").read_text()
    assert '<nav id="contents">' in html and 'id="provenance"' in html
    assert html.index('id="verdict"') < html.index('id="survey"')
    doc = json.loads((out / "survey.json").read_text())
    c = doc["counts"]
    assert f"{c['qualified']} of {len(doc['rows'])} models qualified" in html
    body = html[html.index('<table id="survey">'):]
    order = [body.index(f'id="row-{s}"') for s in ("broken", "pendulum")]
    assert order == sorted(order)  # the error row first
    for slug in ("pendulum", "arm__chain7", "arm__double_pendulum"):
        for stage in ("model_identity", "kinematics", "dynamics"):
            assert f'href="models/{slug}/index.html#stage-{stage}"' in html
        assert (out / "models" / slug / "index.html").is_file()


def test_the_survey_folder_is_the_harness_own_and_nothing_else_is(batch, tmp_path):
    _, _, out, _ = batch
    kind = survey.output_kind("models", evidence.OUTPUT)
    assert check_output_folder(out, kind) == out.resolve()  # may be replaced by a batch
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    (copy / "models" / "stray").mkdir()
    with pytest.raises(BadInput, match="not a survey"):
        check_output_folder(copy, kind)
    (copy / "models" / "stray").rmdir()
    (copy / "notes.txt").write_text("mine")
    with pytest.raises(BadInput, match="notes.txt"):
        check_output_folder(copy, kind)


# ----- bad input: one line, exit 2, nothing written ----------------------------------------------
def _bad_inputs(tmp: Path) -> dict:
    empty = tmp / "empty"
    empty.mkdir()
    (tmp / "binary.txt").write_bytes(b"\xff\xfe\x00\x01")
    (tmp / "missing.txt").write_text(f"# a comment\n{GOLDEN / 'pendulum.urdf'}\nnope.urdf\n")
    (tmp / "badbase.txt").write_text(f"{GOLDEN / 'pendulum.urdf'} sideways\n")
    (tmp / "comments.txt").write_text("# only a comment\n\n")
    return {"missing path": (tmp / "absent", "absent: does not exist"),
            "empty folder": (empty, "empty: holds no URDF"),
            "unreadable list": (tmp / "binary.txt", "binary.txt: cannot be read"),
            "list naming a missing file": (tmp / "missing.txt",
                                           "missing.txt:3: nope.urdf does not exist"),
            "unknown base word": (tmp / "badbase.txt", "badbase.txt:1: unknown base"),
            "list naming nothing": (tmp / "comments.txt", "comments.txt: names no"),
            "a model file": (GOLDEN / "pendulum.urdf", "is a .urdf file, not a folder")}


@pytest.mark.parametrize("case", ["missing path", "empty folder", "unreadable list",
                                  "list naming a missing file", "unknown base word",
                                  "list naming nothing", "a model file"])
def test_bad_input_exits_2_with_nothing_written(case, tmp_path, capsys):
    path, message = _bad_inputs(tmp_path)[case]
    out = tmp_path / "outdir" / "survey"
    before = sorted(p.name for p in tmp_path.iterdir())
    rc = cli.main(["parity", "--batch", str(path), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and err[0].startswith("harness: error: ") and message in err[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # not even a parent folder


def test_swing_batch_bad_input_exits_2(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    rc = cli.main(["swing", "--batch", str(tmp_path / "empty"), "--out",
                   str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "holds no C3D capture" in err[0], err
    assert not (tmp_path / "out").exists()


def test_a_folder_the_harness_did_not_write_is_refused(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    rc = cli.main(["parity", "--batch", str(GOLDEN), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "is not a survey; refusing to replace it" in err[0]
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert (out / "notes.txt").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


def test_list_file_bases_relative_paths_and_slugs(tmp_path):
    (tmp_path / "a").mkdir()
    shutil.copy(GOLDEN / "pendulum.urdf", tmp_path / "a" / "pendulum.urdf")
    shutil.copy(GOLDEN / "pendulum.xml", tmp_path / "a" / "pendulum.xml")
    listfile = tmp_path / "models.txt"
    listfile.write_text("a/pendulum.urdf both   # two runs\n\n# a comment line\n"
                        "a/pendulum.xml\n")
    b = inputs.collect(listfile, "models", base="floating")
    got = [(it.slug, it.kind, it.base) for it in b.items]
    # the two files share a stem: each keeps its extension in its slug
    assert got == [("a__pendulum.urdf", "urdf", "fixed"),
                   ("a__pendulum.urdf@floating", "urdf", "floating"),
                   ("a__pendulum.xml@floating", "mjcf", "floating")]
    assert all(Path(it.path).is_absolute() and Path(it.path).is_file() for it in b.items)
    assert b.source_type == "list" and b.root == str(tmp_path)


# ----- swing: a batch of one capture -------------------------------------------------------------
def test_swing_batch_of_one_capture(tmp_path):
    listfile = tmp_path / "captures.txt"
    listfile.write_text(f"{ROOT / 'data' / 'swing' / 'driver.c3d'}\n")
    out, js = tmp_path / "swings", tmp_path / "swings.json"
    proc = run_cli("swing", "--batch", listfile, "--quick", "--no-replay", "--workers", "2",
                   "--out", out, "--json", js)
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = survey.read_survey(out / "survey.json")
    (row,) = doc["rows"]
    assert row["folder"] == "captures/driver" and row["kind"] == "c3d"
    fit = json.loads((out / "captures" / "driver" / "fit" / "fit.json").read_text())
    from harness.swing.summary import SwingSummary

    assert row["metrics"] == survey.swing_metrics(SwingSummary.of(fit))
    assert row["metrics"]["marker_rmse_top_impact_mm"] == \
        pytest.approx(1e3 * fit["fit"]["marker_rmse_by_phase_m"]["top_to_impact"], rel=1e-12)
    assert (row["status"] == "qualified") == (proc.returncode == 0) == (doc["exit_code"] == 0)
    assert json.loads(js.read_text())["exit_code"] == proc.returncode
    html = (out / "index.html").read_text()
    assert "marker RMSE, top → impact [mm]" in html
    assert 'href="captures/driver/index.html"' in html


def test_folder_slugs_are_folder_names_and_hidden_files_are_skipped(tmp_path):
    (tmp_path / ".git").mkdir()
    shutil.copy(GOLDEN / "pendulum.urdf", tmp_path / ".git" / "pendulum.urdf")
    shutil.copy(GOLDEN / "pendulum.urdf", tmp_path / "my robot (v2).urdf")
    shutil.copy(GOLDEN / "pendulum.xml", tmp_path / "mj.xml")
    b = inputs.collect(tmp_path, "models", base="both")
    assert [(it.slug, it.kind) for it in b.items] == [
        ("mj", "mjcf"), ("mj@floating", "mjcf"),
        ("my_robot__v2_", "urdf"), ("my_robot__v2_@floating", "urdf")]
    with pytest.raises(BadInput, match="unknown base 'sideways'"):
        inputs.collect(tmp_path, "models", base="sideways")


def test_json_naming_a_folder_is_refused_before_the_batch_runs(tmp_path, capsys):
    folder = tmp_path / "summary"
    folder.mkdir()
    out = tmp_path / "survey"
    rc = cli.main(["parity", "--batch", str(GOLDEN), "--out", str(out), "--json",
                   str(folder)])
    cap = capsys.readouterr()
    assert rc == 2 and cap.out == ""
    assert cap.err.strip().splitlines() == [
        f"harness: error: --json {folder}: is a folder; name a file"], cap.err
    assert not out.exists() and list(folder.iterdir()) == []


def test_a_task_that_kills_its_worker_is_a_crashed_row_not_a_lost_batch(tmp_path):
    """A task whose process dies (a real SIGSEGV) on the Dask backend of the batch: the
    other rows finish, the survey is written with a crashed row and exit code 1."""
    from harness.batch import run as batch_run
    from harness.core.io import output_folder
    from tests.support.sweep_cases import segfault_case

    src = tmp_path / "models"
    src.mkdir()
    for name in ("a", "b", "c"):
        shutil.copy(GOLDEN / "pendulum.urdf", src / f"{name}.urdf")
    batch = inputs.collect(src, "models")
    kind = survey.output_kind("models", evidence.OUTPUT)
    workers, execute, _ = api._batch_common(2, None, 60.0)
    with output_folder(tmp_path / "survey", kind) as target:
        o = batch_run.run_batch(batch, out=target, kind=kind, of="models",
                                entry=evidence.OUTPUT, task=segfault_case,
                                case_of=lambda it, folder: {"case_id": it.slug,
                                                            "crash": it.slug == "b"},
                                execute=execute, stages=["model_identity"])
    doc = survey.read_survey(o.path / "survey.json")
    status = {r["slug"]: r["status"] for r in doc["rows"]}
    # a and c returned metrics without a verdict of their own: not qualified, not lost
    assert status == {"a": "failed", "b": "crashed", "c": "failed"}
    crashed = [r for r in doc["rows"] if r["slug"] == "b"][0]
    assert "KilledWorker" in crashed["error"] and crashed["folder"] is None
    assert o.exit_code == 1 == doc["exit_code"]
    assert sorted(p.name for p in o.path.iterdir()) == ["index.html", "survey.json"]


def test_a_batch_leaves_the_dask_configuration_of_its_process_whole(tmp_path):
    """A batch run from Python (a notebook) in a process that had not imported distributed
    yet: afterwards a LocalCluster can still be made (its config section was once deleted
    on leaving the batch's dask.config.set)."""
    (tmp_path / "m").mkdir()
    shutil.copy(GOLDEN / "pendulum.urdf", tmp_path / "m" / "pendulum.urdf")
    code = ("import sys; from harness import api; "
            f"api.parity_batch({str(tmp_path / 'm')!r}, "
            f"out={str(tmp_path / 's')!r}, workers=1, samples=2); "
            "import dask; print(dask.config.get('distributed.comm.require-encryption'))")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert (tmp_path / "s" / "survey.json").is_file()


def test_a_batch_command_starts_its_workers_with_the_engines_imported():
    """harness/launch.py: for ``parity --batch`` on a LocalCluster the forkserver is started
    before the command's imports, preloaded with the named engines' bindings and adapters;
    a process forked from it starts with them imported (and with nothing of an engine not
    named). Not for other commands, a remote ``--scheduler``, or help."""
    code = (
        "import multiprocessing as mp, sys\n"
        "from harness import launch\n"
        "for argv in (['parity', '--fixture', 'pendulum'], ['fit', '--batch', 'x'],\n"
        "             ['parity', '--batch', 'x', '--scheduler', 'tcp://h:1'],\n"
        "             ['parity', '--batch=x', '--scheduler=tcp://h:1'],\n"
        "             ['swing', '--batch', 'x', '--help'], []):\n"
        "    assert launch.head_start(argv) is False, argv\n"
        "assert 'mujoco' not in sys.modules and 'pinocchio' not in sys.modules\n"
        "assert launch.head_start(['parity', '--batch=x', '--engines', 'mujoco,pinocchio'])\n"
        "assert launch.head_start(['parity', '--batch', 'y']) is False  # runs already\n"
        "from tests.support.forked import send_imported\n"
        "ctx = mp.get_context('forkserver')\n"
        "a, b = ctx.Pipe()\n"
        "p = ctx.Process(target=send_imported, args=(b, ['mujoco', 'pinocchio', 'engines.mujoco',\n"
        "    'engines.pinocchio', 'harness.api', 'distributed', 'pydrake', 'opensim']))\n"
        "p.start(); print(a.recv()); p.join()\n"
        "print(sorted(m for m in ('mujoco', 'pinocchio') if m in sys.modules))\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    child, parent = p.stdout.strip().splitlines()[-2:]
    assert child == str(['distributed', 'engines.mujoco', 'engines.pinocchio', 'harness.api',
                         'mujoco', 'pinocchio']), child
    assert parent == "[]", parent  # the command's own process imported nothing of them
