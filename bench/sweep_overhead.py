"""Sweep executor overhead (harness/sweep/executor.py): the wall time per case of cases that do
no work (``noop_case``), so everything measured is the executor's own cost — handing a
case to a worker process, running it, sending the metrics back, bookkeeping.

Measured, each back to back in one run (medians of ``--repeat``):
  local W=1, W=2          forkserver worker pool, one case at a time per worker
  per-case process        a fresh forkserver process for every case (the alternative
                          design the pool is measured against)
  dask W=2                LocalCluster(2 workers, 1 thread each), start-up and close
                          reported apart
  crash recovery          extra wall time of a 2-case sweep when one case is a SIGSEGV
                          (os.kill) instead of a no-op: local (worker replaced) and dask
                          (nanny restarts the worker; allowed-failures 1, so the case
                          crashes twice)

Run: PYTHONPATH=. .venv/bin/python bench/sweep_overhead.py [--cases 400] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from statistics import median

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.sweep.executor import _local_context, local_cluster, run_sweep  # noqa: E402
from tests.support.sweep_cases import noop_case, segfault_case  # noqa: E402


def _cases(n, crash=False):
    cases = [{"case_id": i} for i in range(n)]
    if crash:
        cases[n // 2]["crash"] = True
    return cases


def _per_case_process(n):
    ctx, _ = _local_context(noop_case)
    t0 = time.perf_counter()
    for c in _cases(n):
        p = ctx.Process(target=noop_case, args=(c,))
        p.start()
        p.join()
    return time.perf_counter() - t0


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    n = a.cases
    rows = {}
    run_sweep(noop_case, _cases(4), workers=2)  # warm the forkserver
    for w in (1, 2):
        rows[f"local W={w}"] = median(_timed(lambda: run_sweep(noop_case, _cases(n), workers=w))
                                      for _ in range(a.repeat)) / n
    m = max(20, n // 10)
    rows["per-case process"] = median(_per_case_process(m) for _ in range(a.repeat)) / m
    t0 = time.perf_counter()
    cluster = local_cluster(2)
    start = time.perf_counter() - t0
    addr = cluster.scheduler_address
    rows["dask W=2"] = median(_timed(lambda: run_sweep(noop_case, _cases(n), backend="dask",
                                                       scheduler=addr))
                              for _ in range(a.repeat)) / n
    small = [{"case_id": 0}, {"case_id": 1}]
    crash = [{"case_id": 0, "crash": True}, {"case_id": 1}]
    from distributed import Client

    watcher = Client(addr)

    def crash_and_recover():  # the restarts happen after the sweep: wait for them too
        run_sweep(segfault_case, crash, backend="dask", scheduler=addr)
        watcher.wait_for_workers(2, timeout=300)

    crash_d = median(_timed(crash_and_recover) for _ in range(a.repeat)) - \
        median(_timed(lambda: run_sweep(noop_case, small, backend="dask", scheduler=addr))
               for _ in range(a.repeat))
    watcher.close()
    t0 = time.perf_counter()
    cluster.close()
    close = time.perf_counter() - t0
    crash_l = median(_timed(lambda: run_sweep(segfault_case, crash, workers=1))
                     for _ in range(a.repeat)) - \
        median(_timed(lambda: run_sweep(noop_case, small, workers=1)) for _ in range(a.repeat))
    print(f"sweep executor overhead, {n} no-op cases, median of {a.repeat} "
          f"(os.cpu_count() = {os.cpu_count()})")
    for k, v in rows.items():
        print(f"  {k:18s} {v * 1e3:8.2f} ms per case  ({1 / v:7.0f} cases/s)")
    print(f"  dask LocalCluster(2) start-up {start:.2f} s, close {close:.2f} s")
    print(f"  one SIGSEGV case costs (vs a no-op case, sweeps of 2 cases): local "
          f"{crash_l:+.3f} s (worker replaced), dask {crash_d:+.2f} s (two worker "
          f"restarts, allowed-failures 1)")


if __name__ == "__main__":
    main()
