"""Every example-robot-data URDF, fixed and floating, as one ``harness parity --batch`` list
run on Dask; then the same batch with 1 worker and with 2 workers, and the speed-up.
Writes bench/survey_erd.txt (the survey's per-model results, totals and the timings).

Measured, in one run, each batch through the installed CLI (a fresh process, as a user
runs it), timed end to end [s] (process start to exit: imports, LocalCluster start,
tasks, survey, swap):
  survey     --workers 2: the per-model results (status, nq, nv, worst relative error,
             error) and totals
  W=1, W=2   the same batch again, 1 then 2 workers, alternated ``--repeat`` times:
             end-to-end wall, the executor's wall (survey.json timing.wall_s: cluster
             start, tasks, cluster close), the sum of the tasks' own wall times (the
             work); the speed-up W=1 / W=2 of the fastest run of each (the least
             disturbed by other jobs on the machine) and of the medians
  heavier    the same pair once more with ``--samples`` ``--heavy-samples`` (default 100):
             ten times the sampled work per task against the same fixed costs
  ceiling    before each pair: the same pure-Python loop in 1 process, then in 2 at once:
             what the machine gives two processes at that moment (2.0 on two free cores)
  start-up   a fresh Python importing harness.api and building the four adapters of a
             small model (what each new worker pays once); a LocalCluster of 2 workers
             started and closed (what every batch pays once)

Run (repository root):
    OMP_WAIT_POLICY=PASSIVE .venv/bin/python bench/survey_erd.py [--limit N] [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from urdf_sweep import example_robot_data_urdfs  # noqa: E402

HARNESS = [str(ROOT / ".venv" / "bin" / "harness")]


def _batch(listfile: Path, out: Path, workers: int, extra=()) -> tuple:
    """(end-to-end wall [s], exit code, survey document) of one CLI batch run."""
    if out.exists():
        shutil.rmtree(out)
    t0 = time.perf_counter()
    proc = subprocess.run(HARNESS + ["parity", "--batch", str(listfile), "--workers",
                                     str(workers), "--out", str(out), "--quiet", *extra],
                          capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"batch failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return wall, proc.returncode, json.loads((out / "survey.json").read_text())


def _startup_s() -> float:
    code = ("import time; t=time.perf_counter(); import harness.api as a; "
            "from harness.model import registry; m=a.load_models(['pendulum']); "
            "[registry.adapter_class(e)(m[0]) for e in registry.ENGINES]; "
            "print(time.perf_counter()-t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _spin(n: int) -> float:
    t = time.perf_counter()
    x = 0
    for i in range(n):
        x += i * i % 7
    return time.perf_counter() - t


def _machine_ceiling(n: int = 20_000_000) -> float:
    """What the machine itself gives two processes at once: the same pure-Python loop
    run by 1 process, then by 2 processes at once; 2 × t1 / t2 (2.0 on two free cores)."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        pool.map(_spin, [1000, 1000])  # started
        t = time.perf_counter()
        pool.map(_spin, [n])
        t1 = time.perf_counter() - t
        t = time.perf_counter()
        pool.map(_spin, [n, n])
        t2 = time.perf_counter() - t
    return 2 * t1 / t2


def _cluster_s() -> float:
    code = ("import time; t=time.perf_counter(); "
            "from harness.sweep.executor import local_cluster; c=local_cluster(2); "
            "from distributed import Client; cl=Client(c); cl.wait_for_workers(2); "
            "cl.close(); c.close(); print(time.perf_counter()-t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=None, help="only the first N URDFs")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each W (default 3)")
    ap.add_argument("--heavy-samples", type=int, default=100,
                    help="--samples of the heavier pair (default 100; 0: skip it)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "survey_erd.txt"))
    args = ap.parse_args(argv)
    root, files = example_robot_data_urdfs()
    files = files[:args.limit] if args.limit else files
    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    with tempfile.TemporaryDirectory(prefix="survey_erd-") as tmp:
        tmp = Path(tmp)
        listfile = tmp / "erd.txt"
        listfile.write_text("# every example-robot-data URDF, fixed and floating\n"
                            + "".join(f"{f} both\n" for f in files))
        wall, rc, doc = _batch(listfile, tmp / "survey", 2)
        rows = doc["rows"]
        say(f"harness parity --batch LIST --workers 2: {len(files)} example-robot-data URDFs × "
            f"fixed/floating = {len(rows)} models; {doc['backend']['text']}")
        say(f"harness {doc['harness_version']}, commit {doc['git_commit'][:12]}, "
            f"{doc['timing']['started']}; machine: {os.cpu_count()} CPUs, 1-min load "
            f"average {os.getloadavg()[0]:.1f} after this run (other jobs share the machine)")
        say()
        hdr = f"{'model':62s} {'status':9s} {'nq':>4s} {'nv':>4s} {'worst rel':>9s} {'wall s':>6s}"
        say(hdr + "  error")
        say("-" * (len(hdr) + 7))
        for r in rows:
            w = "-" if r["worst_rel"] is None else f"{r['worst_rel']:.1e}"
            say(f"{r['slug']:62s} {r['status']:9s} {r['nq'] if r['nq'] is not None else '-':>4} "
                f"{r['nv'] if r['nv'] is not None else '-':>4} {w:>9s} {r['wall_s']:6.1f}  "
                f"{r['error'].replace(root + os.sep, '')[:160]}")
        c = doc["counts"]
        worst = max((r["worst_rel"] for r in rows if r["worst_rel"] is not None
                     and r["status"] == "qualified"), default=None)
        say()
        say(f"totals: {len(rows)} models: {c['qualified']} qualified, {c['failed']} failed, "
            f"{c['error']} errors, {c['crashed']} crashed, {c['timeout']} timeouts; exit code "
            f"{rc} (survey.json exit_code {doc['exit_code']}); worst relative error of the "
            f"qualified bundles {'-' if worst is None else format(worst, '.2e')}")
        say(f"survey run: {wall:.1f} s end to end, executor {doc['timing']['wall_s']:.1f} s")
        say()
        timing = {1: [], 2: []}
        for i in range(args.repeat):
            ceiling = _machine_ceiling()
            say(f"run {i + 1}: the machine's ceiling now {ceiling:.2f}× (two processes of "
                f"the same pure-Python loop at once against one)")
            for w in (1, 2):
                wall, _, d = _batch(listfile, tmp / f"w{w}", w)
                work = sum(r["wall_s"] for r in d["rows"])
                timing[w].append((wall, d["timing"]["wall_s"], work))
                same = [(r["slug"], r["status"]) for r in d["rows"]] == \
                    [(r["slug"], r["status"]) for r in rows]
                say(f"run {i + 1} W={w}: {wall:6.1f} s end to end, executor "
                    f"{d['timing']['wall_s']:6.1f} s, sum of task wall times {work:6.1f} s; "
                    f"same statuses as the survey: {same}; load average after "
                    f"{os.getloadavg()[0]:.1f}")
            (e1, x1, _), (e2, x2, _) = timing[1][-1], timing[2][-1]
            say(f"run {i + 1}: speed-up W=1 → W=2 {e1 / e2:.2f}× end to end, {x1 / x2:.2f}× "
                f"executor")
        best = {w: min(timing[w]) for w in timing}
        med = {w: tuple(median(t[k] for t in timing[w]) for k in range(3)) for w in timing}
        for label, t in (("fastest", best), ("median", med)):
            (e1, x1, k1), (e2, x2, k2) = t[1], t[2]
            say(f"speed-up W=1 → W=2 ({label} runs): {e1 / e2:.2f}× end to end, "
                f"{x1 / x2:.2f}× executor (goal ≥ 1.8×); at W=2 the work alone would take "
                f"{k2 / 2:.1f} s of the executor's {x2:.1f} s; task work W=2 / W=1 "
                f"{k2 / k1:.2f}× (> 1: two tasks at once slow each other); overhead outside "
                f"the tasks W=1 {x1 - k1:.1f} s, W=2 {x2 - k2 / 2:.1f} s")
        if args.heavy_samples:
            heavy = {}
            for w in (1, 2):
                wall, _, d = _batch(listfile, tmp / f"h{w}", w,
                                    ("--samples", str(args.heavy_samples)))
                work = sum(r["wall_s"] for r in d["rows"])
                heavy[w] = (wall, d["timing"]["wall_s"], work)
                say(f"--samples {args.heavy_samples} W={w}: {wall:6.1f} s end to end, executor "
                    f"{d['timing']['wall_s']:6.1f} s, sum of task wall times {work:6.1f} s")
            (e1, x1, k1), (e2, x2, k2) = heavy[1], heavy[2]
            say(f"speed-up W=1 → W=2 (--samples {args.heavy_samples}): {e1 / e2:.2f}× end to "
                f"end, {x1 / x2:.2f}× executor; task work W=2 / W=1 {k2 / k1:.2f}×")
        st = _startup_s()
        say(f"start-up of a fresh worker (import harness.api + build the four adapters): "
            f"{st:.1f} s")
        say(f"LocalCluster of 2 workers: started in {_cluster_s():.1f} s and closed")
        say(f"the machine's own ceiling: two processes running the same pure-Python loop at "
            f"once do {_machine_ceiling():.2f}× the work of one in the same time")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
