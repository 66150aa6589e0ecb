"""MuJoCo Warp throughput: forward dynamics [states/s] of one batched call of N states
(N = 1, 100, 10 000) through the adapter (engines/mujoco_warp.py: float32, canonical
conversions included, results widened to float64), against MuJoCo's CPU loop (the
MuJoCo adapter's forward_dynamics, one mj_forward per state) on the same states; kernel
compile time apart from run time.

Compile time: each fixture is first run in a child process whose warp kernel cache
(WARP_CACHE_PATH) is a fresh empty folder, so every kernel is compiled: its first batch
(N = 1) is the compile time, the second the warm run. Then the throughput, in this
process, with the default cache (already built): median of ``--repeat`` calls per N.

Run: .venv/bin/python bench/mujoco_warp_throughput.py [--repeat 5] [--device cpu]
     [--fixtures chain7,tree_floating,golfer3d] [--no-compile] [--out FILE]
The table is also written to bench/mujoco_warp_throughput.txt (``--out``).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.model import registry  # noqa: E402
from harness.model.prepared import prepare_fixture  # noqa: E402
from harness.stages.base import Inputs, fixture_rng  # noqa: E402

SIZES = (1, 100, 10_000)
_CHILD = """
import json, sys, time
from harness.model import registry
from harness.model.prepared import prepare_fixture
from harness.stages.base import Inputs, fixture_rng
fx = sys.argv[1]
t0 = time.perf_counter()
a = registry.adapter_class("mujoco_warp")(prepare_fixture(fx))
load = time.perf_counter() - t0
i = Inputs.sample(a.model, 1, fixture_rng(0, fx))
out = {"load_s": load}
for k in ("first_s", "second_s"):
    t = time.perf_counter()
    a.batch_forward_dynamics(i.q, i.v, i.tau)
    out[k] = time.perf_counter() - t
out["compile_paths_s"] = a.compile_seconds
print(json.dumps(out))
"""


def cold_compile(fx: str, device: str) -> dict:
    """{load_s, first_s (compile), second_s (warm)} of ``fx`` with an empty kernel cache."""
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as cache:
        env = dict(os.environ, WARP_CACHE_PATH=cache, HARNESS_DEVICE=device,
                   PYTHONPATH=str(ROOT))
        p = subprocess.run([sys.executable, "-c", _CHILD, fx], env=env, capture_output=True,
                           text=True, check=True)
        return json.loads(p.stdout.strip().splitlines()[-1])


def throughput(fx: str, repeat: int) -> list[tuple[int, float, float]]:
    """[(N, MuJoCo Warp states/s, MuJoCo CPU loop states/s)] for each N of SIZES."""
    model = prepare_fixture(fx)
    w = registry.adapter_class("mujoco_warp")(model)
    m = registry.adapter_class("mujoco")(model)
    rows = []
    for n in SIZES:
        i = Inputs.sample(model, n, fixture_rng(1, fx))
        w.batch_forward_dynamics(i.q, i.v, i.tau)  # this N's Data allocated, kernels loaded
        tw, tm = [], []
        for _ in range(repeat):
            t = time.perf_counter()
            w.batch_forward_dynamics(i.q, i.v, i.tau)
            tw.append(time.perf_counter() - t)
            t = time.perf_counter()
            for q, v, tau in zip(i.q, i.v, i.tau):
                m.forward_dynamics(q, v, tau)
            tm.append(time.perf_counter() - t)
        rows.append((n, n / float(np.median(tw)), n / float(np.median(tm))))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--fixtures", default="chain7,tree_floating,golfer3d")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "bench" / "mujoco_warp_throughput.txt"))
    args = ap.parse_args()
    os.environ["HARNESS_DEVICE"] = args.device
    lines = [f"# bench/mujoco_warp_throughput.py: forward dynamics states/s, one batched call "
             f"of N states (MuJoCo Warp, device {args.device}) vs MuJoCo's CPU loop "
             f"(one mj_forward per state); median of {args.repeat}; {platform.machine()}, "
             f"{os.cpu_count()} cores"]
    fixtures = args.fixtures.split(",")
    if not args.no_compile:
        lines.append("fixture          cold: load s  compile s (first call)  warm call s")
        for fx in fixtures:
            c = cold_compile(fx, args.device)
            lines.append(f"{fx:16s} {c['load_s']:12.2f} {c['first_s']:22.2f} "
                         f"{c['second_s']:12.4f}")
            print(lines[-1], flush=True)
    lines.append("fixture              N   warp states/s   mujoco CPU states/s   ratio")
    for fx in fixtures:
        for n, sw, sm in throughput(fx, args.repeat):
            lines.append(f"{fx:16s} {n:6d} {sw:15.0f} {sm:21.0f} {sw / sm:7.2f}")
            print(lines[-1], flush=True)
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
