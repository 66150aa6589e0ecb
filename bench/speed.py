"""Command speed: wall time [s] of whole harness commands, each the median of ≥ 3 fresh
subprocesses, measured in one run (OMP_WAIT_POLICY=PASSIVE, OMP_NUM_THREADS=1), with the
goals as ratios to the bare import of the engine bindings measured in the same run:

  (1a) bare import of the four bindings the goal was set on:
       ``import mujoco, pinocchio, crocoddyl, pydrake.all``
  (1c) the same with the fifth, ``opensim``, which every default run now loads too
  (1b) bare import of exactly what the adapters import (engines/*.py): mujoco, pinocchio,
       crocoddyl, opensim and the pydrake submodules of engines/drake.py (not
       pydrake.all), with the environment the engines package sets (MUJOCO_GL=disable)
  (2)  ``harness parity --urdf <example-robot-data panda.urdf> --out TMP`` end to end;
       goal ≤ 2.5 × (1a)
  (3)  ``harness report TMP`` (re-render the bundle of (2)); goal ≤ 1 s
  (4)  ``harness qualify --out TMP2`` (the catalog, every stage); goal ≤ 30 s

Only the commands are timed (no harness internals are imported here), so the figures hold
whatever the report draws with. The table is also written to bench/speed.txt (``--out``).

Run: .venv/bin/python bench/speed.py [--repeat 3] [--qualify-repeat 3]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parent.parent
PY = ROOT / ".venv" / "bin" / "python"
HARNESS = ROOT / ".venv" / "bin" / "harness"
ENV = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": "1"}

BARE_FOUR = "import mujoco, pinocchio, crocoddyl, pydrake.all"
BARE_FIVE = BARE_FOUR + ", opensim"
# what engines/*.py import at module level (engines/drake.py: these pydrake submodules)
BARE_ADAPTERS = ("import os; os.environ.setdefault('MUJOCO_GL', 'disable'); "
                 "import mujoco, pinocchio, crocoddyl, opensim; "
                 "import pydrake.common.eigen_geometry, pydrake.multibody.parsing, "
                 "pydrake.multibody.plant, pydrake.multibody.tree")


def panda_urdf() -> Path:
    """example-robot-data's panda.urdf in the venv (installed with the Pinocchio stack)."""
    hits = sorted((ROOT / ".venv").glob(
        "lib/python*/site-packages/cmeel.prefix/share/example-robot-data/robots/"
        "panda_description/urdf/panda.urdf"))
    if not hits:
        print("bench/speed.py: example-robot-data panda.urdf not found under .venv",
              file=sys.stderr)
        raise SystemExit(2)
    return hits[0]


def wall(cmd, before=None) -> float:
    """Wall time [s] of one fresh subprocess; ``before()`` runs first, untimed."""
    if before is not None:
        before()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=ENV, cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        print(f"bench/speed.py: {' '.join(map(str, cmd))} exited {proc.returncode}:\n"
              f"{proc.stderr[-2000:]}", file=sys.stderr)
        raise SystemExit(1)
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5, help="runs per command (≥ 3; median)")
    ap.add_argument("--qualify-repeat", type=int, default=3, help="runs of harness qualify")
    ap.add_argument("--out", default=str(ROOT / "bench" / "speed.txt"),
                    help="text file the table is written to ('' for none)")
    args = ap.parse_args()
    if args.repeat < 3 or args.qualify_repeat < 3:
        print("bench/speed.py: --repeat and --qualify-repeat must be ≥ 3", file=sys.stderr)
        raise SystemExit(2)
    urdf = panda_urdf()
    tmp = Path(tempfile.mkdtemp(prefix="speed_"))
    bundle, qual = tmp / "parity", tmp / "qualify"
    clear = lambda p: (lambda: shutil.rmtree(p, ignore_errors=True))  # noqa: E731
    cmds = {
        "bare4": [str(PY), "-c", BARE_FOUR],
        "bare5": [str(PY), "-c", BARE_FIVE],
        "bare_adapters": [str(PY), "-c", BARE_ADAPTERS],
        "parity": [str(HARNESS), "parity", "--urdf", str(urdf), "--out", str(bundle),
                   "--quiet"],
        "report": [str(HARNESS), "report", str(bundle), "--quiet"],
    }
    times = {k: [] for k in (*cmds, "qualify")}
    try:
        wall(cmds["bare5"])  # warm the file cache once, untimed
        load = [os.getloadavg()[0]]
        for _ in range(args.repeat):  # interleaved: the machine's state is shared
            times["bare4"].append(wall(cmds["bare4"]))
            times["bare5"].append(wall(cmds["bare5"]))
            times["bare_adapters"].append(wall(cmds["bare_adapters"]))
            times["parity"].append(wall(cmds["parity"], clear(bundle)))
            times["report"].append(wall(cmds["report"]))
        for _ in range(args.qualify_repeat):
            times["qualify"].append(wall([str(HARNESS), "qualify", "--out", str(qual),
                                          "--quiet"], clear(qual)))
        load.append(os.getloadavg()[0])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    m = {k: median(v) for k, v in times.items()}
    rows = [
        ("(1a) import mujoco, pinocchio, crocoddyl, pydrake.all", m["bare4"], "", ""),
        ("(1c) the same and opensim", m["bare5"], "", ""),
        ("(1b) import what engines/*.py import (pydrake submodules)", m["bare_adapters"], "",
         ""),
        ("(2) harness parity --urdf panda.urdf (five engines)", m["parity"],
         f"≤ 2.5 × (1a) = {2.5 * m['bare4']:.2f} s",
         f"{m['parity'] / m['bare4']:.2f} × (1a), {m['parity'] / m['bare5']:.2f} × (1c), "
         f"{m['parity'] / m['bare_adapters']:.2f} × "
         f"(1b): {'met' if m['parity'] <= 2.5 * m['bare4'] else 'NOT met'}"),
        ("(3) harness report BUNDLE", m["report"], "≤ 1 s",
         "met" if m["report"] <= 1.0 else "NOT met"),
        ("(4) harness qualify --out DIR (five engines)", m["qualify"], "≤ 30 s",
         "met" if m["qualify"] <= 30.0 else "NOT met"),
    ]
    lines = [f"{'command':60s} {'median s':>9s}  {'goal':24s} result",
             *(f"{name:60s} {t:9.2f}  {goal:24s} {res}" for name, t, goal, res in rows),
             "runs [s]: " + "; ".join(f"{k} " + " ".join(f"{x:.2f}" for x in v)
                                      for k, v in times.items())]
    for line in lines:
        print(line)
    if args.out:
        Path(args.out).write_text(
            f"# bench/speed.py: wall time of fresh subprocesses, median of {args.repeat} "
            f"({args.qualify_repeat} for qualify), one run; OMP_WAIT_POLICY=PASSIVE "
            "OMP_NUM_THREADS=1; panda.urdf from example-robot-data; 1-min load average "
            f"{load[0]:.2f} before, {load[1]:.2f} after (2 cores)\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
