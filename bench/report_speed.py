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

Run: python bench/report_speed.py [--repeat 5] [--bundle DIR]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": "1",
       "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def wall(cmd: list[str]) -> float:
    """Seconds of one run of ``cmd`` (it must succeed)."""
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=ENV, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--bundle", type=Path, default=None)
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        bundle = args.bundle
        if bundle is None:
            bundle = Path(tmp) / "q"
            subprocess.run([py, "-m", "harness.cli", "qualify", "--out", str(bundle),
                            "--quiet"], cwd=ROOT, env=ENV, check=True)
        floor_cmd = [py, "-c", "import harness.cli"]
        report_cmd = [py, "-m", "harness.cli", "report", str(bundle), "--quiet"]
        wall(floor_cmd), wall(report_cmd)  # warm the file cache and the bytecode
        floor, report = [], []
        for _ in range(args.repeat):  # interleaved: load drifts hit both alike
            floor.append(wall(floor_cmd))
            report.append(wall(report_cmd))
        size = (bundle / "index.html").stat().st_size
    f, r = median(floor), median(report)
    print(f"import floor (python -c 'import harness.cli'): {f:.2f} s "
          f"(median of {args.repeat}; {min(floor):.2f}-{max(floor):.2f})")
    print(f"harness report (catalog qualify bundle): {r:.2f} s "
          f"(median of {args.repeat}; {min(report):.2f}-{max(report):.2f}); goal <= 1 s")
    print(f"ratio report / floor: {r / f:.2f}; report - floor: {r - f:.2f} s")
    print(f"index.html: {size} bytes; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
