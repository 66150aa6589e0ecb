"""Report speed: wall time [s] of ``harness report BUNDLE`` (re-render a bundle's
index.html; it verifies the bundle first: every record recomputed from its arrays) on the
catalog qualification's bundle, against the import floor, ``python -c "import
harness.cli"`` (the interpreter's start and the harness's own imports: what any command
pays before it works), measured interleaved in one run as medians of ``--repeat`` fresh
subprocesses (OMP_WAIT_POLICY=PASSIVE, OMP_NUM_THREADS=1). Prints both figures, their
ratio and report − floor (the report's own work). Goal: ``harness report`` ≤ 1 s.

The bundle: ``--bundle DIR`` (a qualify bundle, re-rendered in place), or one made here
with ``harness qualify --out TMP`` (about a minute). Only commands are timed (nothing of
the harness is imported here). Timings on a shared 2-core machine carry load noise: the
load average is printed with them.

Wall and CPU time (user + system of the child, ``resource.getrusage``) are both
printed: on a shared machine the CPU seconds move less with the load. ``--before ROOT``
(a checkout of older code, e.g. ``git worktree add /tmp/old COMMIT``) also times that
code's ``harness report`` on a copy of the same bundle and its import floor, interleaved,
for a before/after in one run. The report's compiled templates live in the user's cache
folder: the warm-up run fills it, as any earlier command would have. Bytecode is written
(PYTHONDONTWRITEBYTECODE is dropped for the children), as an installed harness has it.

Run: python bench/report_speed.py [--repeat 5] [--bundle DIR] [--before ROOT] [--out FILE]
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parent.parent
BASE_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
BASE_ENV.update(OMP_WAIT_POLICY="PASSIVE", OMP_NUM_THREADS="1")


def env_for(root: Path) -> dict[str, str]:
    """The children's environment with ``root`` first on the path."""
    return {**BASE_ENV, "PYTHONPATH": str(root) + os.pathsep + BASE_ENV.get("PYTHONPATH", "")}


def timed(cmd: list[str], root: Path) -> tuple[float, float]:
    """(wall [s], CPU user + system [s]) of one run of ``cmd`` from ``root`` (it must
    succeed)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=root, env=env_for(root), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def cpu_model() -> str:
    """The processor's name as /proc/cpuinfo gives it (Linux), else "CPU unknown"."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for row in fh:
                if row.startswith("model name"):
                    return row.split(":", 1)[1].strip()
    except OSError:
        pass
    return "CPU unknown"


def line(label: str, runs: list[tuple[float, float]]) -> str:
    w, c = [x[0] for x in runs], [x[1] for x in runs]
    return (f"{label}: wall {median(w):.2f} s ({min(w):.2f}-{max(w):.2f}), "
            f"CPU {median(c):.2f} s ({min(c):.2f}-{max(c):.2f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--bundle", type=Path, default=None)
    ap.add_argument("--before", type=Path, default=None,
                    help="a checkout of older code to time on the same bundle")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "report_speed.txt")
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        bundle = args.bundle
        if bundle is None:
            bundle = Path(tmp) / "q"
            subprocess.run([py, "-m", "harness.cli", "qualify", "--out", str(bundle),
                            "--quiet"], cwd=ROOT, env=env_for(ROOT), check=True)
        cmds = {"import floor (python -c 'import harness.cli')":
                ([py, "-c", "import harness.cli"], ROOT),
                "harness report (catalog qualify bundle)":
                ([py, "-m", "harness.cli", "report", str(bundle), "--quiet"], ROOT)}
        if args.before is not None:
            old = Path(tmp) / "before"
            shutil.copytree(bundle, old)
            cmds[f"harness report, code at {args.before}"] = (
                [py, "-m", "harness.cli", "report", str(old), "--quiet"], args.before.resolve())
            cmds[f"import floor, code at {args.before}"] = (
                [py, "-c", "import harness.cli"], args.before.resolve())
        for cmd, root in cmds.values():  # warm the file cache, bytecode and template cache
            timed(cmd, root)
        runs: dict[str, list[tuple[float, float]]] = {k: [] for k in cmds}
        loads = []
        for _ in range(args.repeat):  # interleaved: load drifts hit every command alike
            for k, (cmd, root) in cmds.items():
                runs[k].append(timed(cmd, root))
            loads.append(os.getloadavg()[0])
        size = (bundle / "index.html").stat().st_size
    floor_k, report_k = list(cmds)[:2]
    f = median(x[0] for x in runs[floor_k])
    r = median(x[0] for x in runs[report_k])
    fc = median(x[1] for x in runs[floor_k])
    rc = median(x[1] for x in runs[report_k])
    out = [f"command: python bench/report_speed.py {' '.join(sys.argv[1:])}",
           f"machine: {cpu_model()}, {os.cpu_count()} cores; Python "
           f"{sys.version.split()[0]}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
           f"medians of {args.repeat} interleaved runs (range in brackets)"]
    out += [line(k, v) for k, v in runs.items()]
    out.append(f"goal: harness report <= 1 s wall; ratio report / floor: wall {r / f:.2f}, "
               f"CPU {rc / fc:.2f}; report - floor: wall {r - f:.2f} s, CPU {rc - fc:.2f} s")
    if args.before is not None:
        b_k, bf_k = list(cmds)[2:4]
        b = median(x[0] for x in runs[b_k])
        bc = median(x[1] for x in runs[b_k])
        bf = median(x[0] for x in runs[bf_k])
        bfc = median(x[1] for x in runs[bf_k])
        out.append(f"before / now: wall {b / r:.2f}x, CPU {bc / rc:.2f}x; before's ratio to "
                   f"its own floor: wall {b / bf:.2f}, CPU {bc / bfc:.2f}; before - its "
                   f"floor: wall {b - bf:.2f} s, CPU {bc - bfc:.2f} s")
    out.append(f"index.html: {size} bytes; load average {min(loads):.1f}-{max(loads):.1f} "
               f"during the runs; {os.cpu_count()} cores")
    text = "\n".join(out) + "\n"
    print(text, end="")
    args.out.write_text(text)


if __name__ == "__main__":
    main()
