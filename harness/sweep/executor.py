"""Parameter sweeps: one executor interface, two backends, crash-tolerant.

Dimension legend: C cases; W workers. A *case* is a JSON-serialisable dict of scalar
inputs with a unique ``case_id`` (int or str); ``run_case(case) -> dict`` returns
JSON-serialisable scalar metrics (SI units, names carry non-SI suffixes). numpy scalars
(np.float64, np.int64, np.bool_) in cases and metrics are converted to Python scalars;
NaN/inf metrics are recorded as null.

``run_sweep(run_case, cases, backend="local"|"dask", workers=W, scheduler=ADDRESS,
progress=callable, timeout_s=..., isolate=case_ids) -> SweepResult`` runs every case and
records one row per case with a status (``progress`` gets {done, total, counts, elapsed_s,
row: the row just finished} as each case finishes):

* ``ok``       run_case returned metrics;
* ``error``    run_case raised a Python exception (message recorded) or returned
               something that is not a dict of JSON scalars;
* ``crashed``  the process running the case died (segfault, abort, os._exit): the reason
               names the signal or exit code (local) or Dask's KilledWorker message; or an
               *isolated* case (``isolate``: a case known to crash) raised — native code
               fails either way (a C++ exception such as std::bad_alloc reaches Python as
               an exception, MemoryError, instead of a signal), and the reason says which;
* ``timeout``  the case ran longer than ``timeout_s`` and its process was killed.

The sweep always goes on: a crash costs the process that ran the case, never the sweep.
Local backend: a worker process is never reused after a case that did not finish ok
(crashed, raised, timed out: an exception out of C++ may leave its heap corrupt), and an
isolated case runs in a fresh worker that is discarded after it, whatever happens.
Rows are ordered by case_id, whatever the completion order.

Backends
--------
``local`` (default): W long-lived worker processes from a ``forkserver`` context (the
server preloads run_case's module, so a restarted worker starts in ~tens of ms without
re-importing engines); cases are handed out one at a time over a pipe; the parent waits
on every worker's pipe and process sentinel. A worker that dies mid-case is recorded as
``crashed`` with its exit status and replaced; one whose case raised or timed out is
replaced too; one that dies before it reported ready never received its case: it is
replaced and the case handed to the new process (counted in ``worker_start_failures``);
when a replacement dies before ready too, the sweep stops with a start failure
(RuntimeError), never blamed on a case. ProcessPoolExecutor is not used: one worker crash
breaks the whole pool (BrokenProcessPool).

``dask``: distributed. ``scheduler=ADDRESS`` connects to a running scheduler; otherwise a
``LocalCluster(n_workers=W, threads_per_worker=1, processes=True)`` is started with
``distributed.scheduler.allowed-failures = 1`` (a case that kills its worker twice is
reported with KilledWorker; an innocent case that shared the dead worker is retried once)
and ``worker-saturation = 1.0`` (one case in flight per worker thread, so a crash makes
as few innocent suspects as possible). A remote scheduler applies its own configuration.
Timeouts on Dask: a watchdog thread in the worker logs a ``harness-sweep-timeout``
event and kills its own worker process (a running C++ call cannot be interrupted in a
thread); the case is then recorded as ``timeout``. With allowed-failures 1 the scheduler
retries it once first, so a timed-out case costs up to 2 × timeout_s. A Dask worker whose
case raised stays in service (Dask restarts only a worker that died): run cases that may
fail in native code on the local backend, or mark them ``isolate``d so that their failure
is at least classified as a crash.
"""
from __future__ import annotations

import json
import math
import os
import pickle
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.core.errors import BadInput
from harness.core.strict import check_workers
from harness.model import registry

if TYPE_CHECKING:
    from distributed import LocalCluster

STATUSES = ("ok", "error", "crashed", "timeout")
BACKENDS = ("local", "dask")
TIMEOUT_TOPIC = "harness-sweep-timeout"
DEFAULT_TIMEOUT_S = 600.0
LOCAL_RESTART_LIMIT = 1000  # worker restarts per sweep before giving up (a broken setup)
START_ATTEMPTS = 2  # consecutive worker starts that die before ready: a broken setup


# ----- cases and results ----------------------------------------------------------------
def _plain(x):
    """A numpy scalar (np.float64, np.int64, np.bool_) as the Python scalar it holds."""
    if type(x).__module__ == "numpy" and hasattr(x, "item") and getattr(x, "ndim", 1) == 0:
        return x.item()
    return x


def _is_scalar(x) -> bool:
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return True
    if isinstance(x, int):
        return True
    if isinstance(x, float):
        return math.isfinite(x)
    return False


def _sort_key(case_id):
    return (0, case_id, "") if isinstance(case_id, int) else (1, 0, str(case_id))


def validate_cases(cases: Sequence[dict[str, Any]],
                   where: str = "grid") -> list[dict[str, Any]]:
    """Cases as a list of plain dicts; BadInput naming the problem (duplicate or missing
    case_id, a value that is not a finite JSON scalar)."""
    if not isinstance(cases, (list, tuple)) or not cases:
        raise BadInput(where, "must be a non-empty list of case dicts")
    out, seen = [], set()
    for i, c in enumerate(cases):
        if not isinstance(c, dict) or "case_id" not in c:
            raise BadInput(where, f"case #{i} is not a dict with a case_id")
        c = {k: _plain(v) for k, v in c.items()}
        cid = c["case_id"]
        if isinstance(cid, bool) or not isinstance(cid, (int, str)):
            raise BadInput(where, f"case #{i}: case_id must be an int or a str, got {cid!r}")
        if cid in seen:
            raise BadInput(where, f"case_id {cid!r} appears twice")
        seen.add(cid)
        for k, v in c.items():
            if not isinstance(k, str) or not _is_scalar(v):
                raise BadInput(where, f"case {cid!r}: {k!r} = {v!r} is not a finite "
                                      "JSON scalar")
        out.append(dict(c))
    return out


def _check_metrics(m):
    """None if ``m`` is a dict of JSON scalars (numpy scalars converted in place), else
    the problem (one line)."""
    if isinstance(m, dict):
        for k in list(m):
            m[k] = _plain(m[k])
    if not isinstance(m, dict):
        return f"run_case returned {type(m).__name__}, not a dict of metrics"
    for k, v in m.items():
        if not isinstance(k, str):
            return f"run_case returned a non-string metric name {k!r}"
        if isinstance(v, float) and not math.isfinite(v):
            continue  # recorded as null (JSON has no NaN); see _json_metrics
        if not _is_scalar(v):
            return f"run_case returned metric {k!r} = {type(v).__name__}, not a JSON scalar"
    return None


def _json_metrics(m: dict) -> dict:
    """NaN/inf are not JSON: recorded as None (the heat map shows them as missing)."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in m.items()}


def _one_line(text) -> str:
    return " ".join(str(text).split())[:500]


@dataclass
class SweepResult:
    """rows: C dicts {case_id, status, inputs, metrics, reason, wall_s, attempts}, ordered
    by case_id; backend: {name, workers, scheduler, ...}; wall_s [s] of the whole sweep."""

    rows: list
    backend: dict
    wall_s: float
    started: str = ""
    extra: dict = field(default_factory=dict)

    def counts(self) -> dict:
        c = {s: 0 for s in STATUSES}
        for r in self.rows:
            c[r["status"]] += 1
        return c

    def by_id(self) -> dict:
        return {r["case_id"]: r for r in self.rows}


def _row(case, status, metrics=None, reason="", wall_s=0.0, attempts=1) -> dict:
    return {"case_id": case["case_id"], "status": status,
            "inputs": {k: v for k, v in case.items() if k != "case_id"},
            "metrics": _json_metrics(metrics) if metrics else {}, "reason": _one_line(reason),
            "wall_s": float(wall_s), "attempts": int(attempts)}


def _exit_reason(exitcode) -> str:
    if exitcode is None:
        return "worker process vanished"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"worker process killed by {name} (exit status {exitcode})"
    return f"worker process exited with code {exitcode}"


# ----- progress -------------------------------------------------------------------------
class ProgressPrinter:
    """Callable for ``run_sweep(progress=...)``: one line on ``stream`` (stderr) with
    done/total, crashed/error/timeout counts, rate [cases/s] and ETA, at most every
    ``interval_s`` seconds, and always for the last case."""

    def __init__(self, stream=None, interval_s: float = 1.0, label: str = "sweep"):
        self.stream, self.interval_s, self.label = stream, interval_s, label
        self._last = None   # the first line comes interval_s after the first finished case

    def __call__(self, state: dict):
        now = time.monotonic()
        final = state["done"] >= state["total"]
        if self._last is None:
            self._last = now - (math.inf if self.interval_s <= 0 else 0.0)
        if not final and now - self._last < self.interval_s:
            return
        self._last = now
        stream = self.stream or sys.stderr
        rate = state["done"] / state["elapsed_s"] if state["elapsed_s"] > 0 else 0.0
        eta = (state["total"] - state["done"]) / rate if rate > 0 else math.inf
        c = state["counts"]
        stream.write(f"{self.label}: {state['done']}/{state['total']} done, "
                     f"{c['crashed']} crashed, {c['error']} errors, {c['timeout']} timeouts, "
                     f"{rate:.1f} cases/s, "
                     + ("ETA -" if not math.isfinite(eta) else f"ETA {eta:.0f} s")
                     + f" [{state['elapsed_s']:.1f} s]\n")
        stream.flush()


class _Tracker:
    def __init__(self, total, progress):
        self.total, self.progress = total, progress
        self.rows = {}
        self.counts = {s: 0 for s in STATUSES}
        self.t0 = time.monotonic()

    def add(self, row: dict[str, Any]) -> None:
        self.rows[row["case_id"]] = row
        self.counts[row["status"]] += 1
        if self.progress is not None:
            self.progress({"done": len(self.rows), "total": self.total,
                           "counts": dict(self.counts),
                           "elapsed_s": time.monotonic() - self.t0, "row": row})


# ----- entry point ----------------------------------------------------------------------
def run_sweep(run_case: Callable[[dict[str, Any]], dict[str, Any]],
              cases: Sequence[dict[str, Any]], backend: str = "local",
              workers: int | None = None, scheduler: str | None = None,
              progress: Callable[[dict[str, Any]], None] | None = None,
              timeout_s: float = DEFAULT_TIMEOUT_S,
              isolate: Iterable[int | str] = ()) -> SweepResult:
    """Run ``run_case`` on every case (C), return a SweepResult (rows by case_id).

    run_case must be a module-level function (it is sent to other processes by name).
    workers: W processes (default: os.cpu_count()); scheduler: a Dask scheduler address
    (backend dask only; ``workers`` is then ignored); timeout_s [s] per case; isolate:
    case_ids of cases expected to crash (module docstring: a fresh process each, and an
    exception counts as a crash)."""
    cases = validate_cases(cases)
    known = {c["case_id"] for c in cases}
    isolate = {_plain(x) for x in isolate}
    if isolate - known:
        raise BadInput("isolate", f"case_ids {sorted(map(str, isolate - known))} are not in "
                                  "the grid")
    iso = {i for i, c in enumerate(cases) if c["case_id"] in isolate}
    if backend not in BACKENDS:
        raise BadInput("--backend", f"unknown backend {backend!r} (known: {', '.join(BACKENDS)})")
    if scheduler is not None and backend != "dask":
        raise BadInput("--scheduler", "needs the dask backend")
    if workers is None:
        workers = max(1, os.cpu_count() or 1)
    check_workers(workers)
    if not (isinstance(timeout_s, (int, float)) and timeout_s > 0 and math.isfinite(timeout_s)):
        raise BadInput("--timeout", f"must be a finite number of seconds > 0, got {timeout_s!r}")
    try:
        pickle.loads(pickle.dumps(run_case))
    except Exception as e:
        raise BadInput("run_case", f"cannot be sent to a worker process ({e}); it must be "
                                   "a module-level function")
    tracker = _Tracker(len(cases), progress)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    t0 = time.perf_counter()
    if backend == "local":
        info = _run_local(run_case, cases, workers, float(timeout_s), tracker, iso)
    else:
        info = _run_dask(run_case, cases, workers, scheduler, float(timeout_s), tracker, iso)
    wall = time.perf_counter() - t0
    rows = sorted(tracker.rows.values(), key=lambda r: _sort_key(r["case_id"]))
    info.update(timeout_s=float(timeout_s))
    return SweepResult(rows, info, wall, started)


# ----- local backend --------------------------------------------------------------------
def _local_worker(run_case, conn):
    """Worker loop: receive (index, case), send (index, kind, payload, wall_s)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    conn.send(("ready", os.getpid()))
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        i, case = msg
        t0 = time.perf_counter()
        try:
            m = run_case(dict(case))
            problem = _check_metrics(m)
            out = ("error", problem) if problem else ("ok", m)
        except Exception as e:
            tb = traceback.extract_tb(e.__traceback__)
            where = f" (at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
            out = ("error", f"{type(e).__name__}: {e}{where}")
        conn.send((i, out[0], out[1], time.perf_counter() - t0))


class _Slot:
    def __init__(self, ctx, run_case):
        self.parent, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_local_worker, args=(run_case, child), daemon=True)
        self.proc.start()
        child.close()
        self.job = None      # index of the case in flight
        self.t_start = 0.0
        self.ready = False   # the worker has started (its "ready" message arrived)
        self.used = 0        # cases handed to this process

    def kill(self) -> None:
        try:
            self.proc.kill()
        except Exception:
            pass
        self.proc.join(5)
        self.parent.close()


def _local_context(run_case):
    # multiprocessing costs every command about 10 ms to import: only for a sweep's workers
    import multiprocessing as mp

    method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
    ctx = mp.get_context(method)
    if method == "forkserver":
        mod = getattr(run_case, "__module__", None)
        if mod and mod != "__main__":
            ctx.set_forkserver_preload(["harness.sweep.executor", mod])
    return ctx, method


def _raised_reason(payload, worker: str = "its worker process was discarded") -> str:
    return (f"raised {payload} — an isolated case (known to crash) failing by an exception "
            f"(e.g. a C++ exception out of native code) instead of a signal; {worker}")


def _run_local(run_case, cases, workers, timeout_s, tracker, iso=frozenset()) -> dict:
    from multiprocessing.connection import wait as mp_wait  # a sweep's workers only

    ctx, method = _local_context(run_case)
    n = min(workers, len(cases))
    pending = list(range(len(cases)))[::-1]   # pop() hands out cases in grid order
    slots = [_Slot(ctx, run_case) for _ in range(n)]
    restarts = 0
    start_failures = 0   # workers that died before they reported ready (the sweep's total)
    failed_starts = 0    # the same, since a worker last reported ready

    def hand_out(slot: _Slot) -> None:
        if pending:
            i = pending.pop()
            if i in iso and slot.used:  # an isolated case starts in a fresh process
                slot = replace(slot)
            try:
                slot.parent.send((i, cases[i]))
            except OSError:
                # the worker exited: between cases (it had been ready), replaced, not a
                # crash; else the wait loop finds it dead before ready, a start failure
                if slot.ready:
                    slot = replace(slot)
                    try:
                        slot.parent.send((i, cases[i]))
                    except OSError:
                        pass
            slot.job, slot.t_start = i, time.monotonic()
            slot.used += 1
        else:
            slot.job = None

    def replace(slot: _Slot) -> _Slot:
        nonlocal restarts
        slot.kill()
        restarts += 1
        if restarts > LOCAL_RESTART_LIMIT:
            raise RuntimeError(f"sweep: more than {LOCAL_RESTART_LIMIT} worker restarts")
        new = _Slot(ctx, run_case)
        slots[slots.index(slot)] = new
        return new

    tracker.t0 = time.monotonic()  # rate and ETA from when the workers exist
    try:
        for s in slots:
            hand_out(s)
        while any(s.job is not None for s in slots):
            busy = [s for s in slots if s.job is not None]
            now = time.monotonic()
            wait_s = max(0.0, min(s.t_start + timeout_s - now for s in busy))
            mp_wait([s.parent for s in busy] + [s.proc.sentinel for s in busy],
                    timeout=min(wait_s, 1.0) + 1e-3)  # wakes on a result or an exit
            for s in busy:
                case = cases[s.job]
                result = None
                try:
                    while result is None and s.parent.poll():
                        msg = s.parent.recv()
                        if msg[0] == "ready":
                            s.ready = True
                            failed_starts = 0
                        else:
                            result = msg
                except (EOFError, OSError):
                    pass  # the worker died; handled below
                if result is not None:
                    _, kind, payload, wall = result
                    if kind == "ok":
                        tracker.add(_row(case, "ok", payload, wall_s=wall))
                    elif s.job in iso:
                        tracker.add(_row(case, "crashed", reason=_raised_reason(payload),
                                         wall_s=wall))
                    else:
                        tracker.add(_row(case, "error", reason=payload, wall_s=wall))
                    # never reuse a process after a failure (or after an isolated case)
                    hand_out(replace(s) if kind != "ok" or s.job in iso else s)
                elif not s.proc.is_alive():
                    s.proc.join(5)
                    if not s.ready:
                        # every message was read above, so it never reached its case
                        start_failures += 1
                        failed_starts += 1
                        if failed_starts < START_ATTEMPTS:
                            pending.append(s.job)   # handed out again, first
                            hand_out(replace(s))
                            continue
                        raise RuntimeError(
                            f"sweep: a worker process failed to start "
                            f"({_exit_reason(s.proc.exitcode)}); if run_case lives in a "
                            f"script, guard the script's code with "
                            f"`if __name__ == \"__main__\":`")
                    tracker.add(_row(case, "crashed", reason=_exit_reason(s.proc.exitcode),
                                     wall_s=time.monotonic() - s.t_start))
                    hand_out(replace(s))
                elif time.monotonic() - s.t_start > timeout_s:
                    tracker.add(_row(case, "timeout", reason=f"ran longer than {timeout_s:g} s;"
                                     " worker process killed", wall_s=time.monotonic() - s.t_start))
                    hand_out(replace(s))
    finally:
        for s in slots:
            try:
                s.parent.send(None)
            except Exception:
                pass
        for s in slots:
            s.proc.join(2)
            if s.proc.is_alive():
                s.kill()
    return {"name": "local", "workers": n, "start_method": method,
            "worker_restarts": restarts, "worker_start_failures": start_failures,
            "scheduler": None}


# ----- dask backend ---------------------------------------------------------------------
def _dask_task(run_case, case, timeout_s, token, isolated=False):
    """Runs inside a Dask worker: (kind, payload, wall_s). A watchdog kills the worker
    process if the case outlives timeout_s (logged first as a TIMEOUT_TOPIC event)."""
    import threading

    from distributed import get_worker

    done = threading.Event()
    worker = get_worker()  # thread-local: only the task's own thread can look it up

    def watchdog() -> None:
        if not done.wait(timeout_s):
            try:
                worker.log_event(TIMEOUT_TOPIC, {"sweep": token, "case_id": case["case_id"]})
                time.sleep(0.5)   # let the batched stream deliver the event
            finally:
                os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watchdog, daemon=True).start()
    t0 = time.perf_counter()
    try:
        m = run_case(dict(case))
        problem = _check_metrics(m)
        return ("error", problem, time.perf_counter() - t0) if problem else \
            ("ok", m, time.perf_counter() - t0)
    except Exception as e:
        reason = f"{type(e).__name__}: {e}"
        if isolated:
            return ("crashed", _raised_reason(reason, "the Dask worker stays in service"),
                    time.perf_counter() - t0)
        return ("error", reason, time.perf_counter() - t0)
    finally:
        done.set()


DASK_CONFIG = {"distributed.scheduler.allowed-failures": 1,
               # What a LocalCluster of a few workers does not need, and what it costs
               # them: the workers' statistical profiler (a sampling thread, 100 Hz, for
               # the dashboard's profile page), the event loops' 20 ms responsiveness tick,
               # the 0.1 s memory polls and 0.5 s system monitor, work stealing (one case
               # per worker thread is queued on the scheduler anyway). On 2 cores the
               # scheduler and nannies share a core with the workers: measured, a batch of
               # 154 models on 2 workers 19.9-20.4 s -> 18.9-19.1 s, main process CPU
               # 3.1 -> 2.6 s. A nanny still restarts a worker over its memory limit, ~1 s
               # later at most.
               "distributed.worker.profile.enabled": False,
               "distributed.admin.tick.interval": "500ms",
               "distributed.worker.memory.monitor-interval": "1s",
               "distributed.admin.system-monitor.interval": "2s",
               "distributed.scheduler.work-stealing": False,
               "distributed.scheduler.worker-saturation": 1.0,
               # A LocalCluster hard-closes a nanny whose worker has not re-registered
               # lost-worker-timeout (15 s) after *each* removal: with crashes seconds
               # apart (a restart takes ~5 s here) the nanny is closed for good and the
               # cluster ends up with no workers (measured: a 200-case sweep with 3
               # crashing cases hung). The nanny restarts the worker itself.
               "distributed.deploy.lost-worker-timeout": "3650 days",
               # ... and if no worker is left anyway, queued cases fail (recorded as
               # errors) instead of waiting forever
               "distributed.scheduler.no-workers-timeout": "120s",
               # a worker may start processes of its own: Drake's constrained row runs SAP
               # in a child process (a crash kills only the child), which a daemonic worker
               # is not allowed to start (measured: every model with a joint coupling
               # failed that row in a batch)
               "distributed.worker.daemon": False}


def start_forkserver(modules: Iterable[str]) -> bool:
    """Start this process's multiprocessing forkserver now, preloaded with ``modules`` (import
    names; one that fails to import is skipped by the server), so that every worker process
    forked from it later (a LocalCluster's nannies and workers, the local backend's workers)
    starts with them imported. The server imports them while the caller goes on: a batch's
    engine imports (~1.1 s) overlap its own start-up instead of delaying each worker's first
    case. False (nothing done) where forkserver is missing or this process's server runs
    already (its preload is then what it was started with)."""
    # multiprocessing costs every command about 10 ms to import: only for a sweep's workers
    import multiprocessing as mp

    if "forkserver" not in mp.get_all_start_methods():
        return False
    from multiprocessing import forkserver

    if getattr(forkserver._forkserver, "_forkserver_pid", None) is not None:
        return False
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(list(dict.fromkeys(modules)))
    forkserver.ensure_running()
    return True


# what Dask's own forkserver preload holds (distributed.utils.get_mp_context), kept when
# start_forkserver starts the server first
DASK_PRELOAD = ("distributed", "dask", "msgpack", "cloudpickle", "tornado", "toolz", "numpy")


def engine_preload(engines: str | Sequence[str] | None = None,
                   extra: Iterable[str] = ()) -> list[str]:
    """The modules a Dask worker running ``engines`` (None, "all", a comma-separated text or
    a list of names; names not known here are skipped: the command's own checks report
    them) imports: DASK_PRELOAD, ``extra`` (the task's modules), then each engine's binding
    and adapter module."""
    text = engines if engines is None or isinstance(engines, str) else ",".join(engines)
    names = list(registry.ENGINES) if text is None or text.strip() == "all" else \
        [n for n in (t.strip() for t in text.split(",")) if n in registry.ENGINES]
    return [*DASK_PRELOAD, *extra, *registry.modules(names)]


def local_cluster(workers: int) -> LocalCluster:
    """A LocalCluster(n_workers, threads_per_worker=1, processes=True) with DASK_CONFIG
    (for the CLI, tests and benchmarks). Use as a context manager."""
    import dask
    from distributed import LocalCluster

    # lost-worker-timeout is read whenever a worker is removed, and worker.daemon whenever
    # a nanny (re)starts its worker, long after this call: set for the process (a harness
    # process owns its dask configuration)
    dask.config.set({k: DASK_CONFIG[k] for k in ("distributed.deploy.lost-worker-timeout",
                                                 "distributed.worker.daemon")})
    with dask.config.set(DASK_CONFIG):
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                            dashboard_address=None,
                            silence_logs=int(os.environ.get("HARNESS_DASK_LOG", "40")))


def _scheduler_allowed_failures(dask_scheduler=None):
    return int(dask_scheduler.allowed_failures)


def _run_dask(run_case, cases, workers, scheduler, timeout_s, tracker, iso=frozenset()) -> dict:
    import dask
    from distributed import Client, as_completed

    try:
        from distributed.scheduler import KilledWorker
    except ImportError:  # pragma: no cover - older distributed
        from distributed import KilledWorker

    import logging

    cluster = None
    sched_log = logging.getLogger("distributed.scheduler")
    old_level = sched_log.level
    with dask.config.set(DASK_CONFIG):
        if scheduler is None:  # its scheduler logs every KilledWorker: we report them
            sched_log.setLevel(logging.CRITICAL)
            cluster = local_cluster(workers)
            address = cluster.scheduler_address
        else:
            address = scheduler
        try:
            client = Client(address, timeout="20s")
        except (OSError, TimeoutError) as e:
            if cluster is not None:
                cluster.close()
            sched_log.setLevel(old_level)
            raise BadInput("--scheduler", f"cannot connect to {address} ({_one_line(e)})")
    try:
        try:
            client.wait_for_workers(1, timeout=60)
        except TimeoutError:
            raise BadInput("--scheduler", f"no worker joined {address} within 60 s")
        nworkers = len(client.scheduler_info().get("workers", {}))
        allowed = client.run_on_scheduler(_scheduler_allowed_failures)
        tracker.t0 = time.monotonic()  # rate and ETA from when the cluster is up
        futures = {}
        token = f"{os.getpid()}-{time.time_ns()}"  # this sweep's tasks and events
        for i, c in enumerate(cases):
            f = client.submit(_dask_task, run_case, c, timeout_s, token, i in iso, pure=False,
                              key=f"harness-sweep-{token}-{i}")
            futures[f] = i
        for f in as_completed(list(futures)):
            case = cases[futures[f]]
            try:
                kind, payload, wall = f.result()
            except KilledWorker as e:
                timed_out = {ev.get("case_id") for _, ev in client.get_events(TIMEOUT_TOPIC)
                             if isinstance(ev, dict) and ev.get("sweep") == token}
                if case["case_id"] in timed_out:
                    tracker.add(_row(case, "timeout", reason=f"ran longer than {timeout_s:g} "
                                     f"s; Dask worker killed ({_one_line(e)})",
                                     attempts=allowed + 1))
                else:
                    tracker.add(_row(case, "crashed", reason=f"KilledWorker: {_one_line(e)}",
                                     attempts=allowed + 1))
            except Exception as e:  # a scheduler-side failure of this one task
                tracker.add(_row(case, "error", reason=f"{type(e).__name__}: {_one_line(e)}"))
            else:
                if kind == "ok":
                    tracker.add(_row(case, "ok", payload, wall_s=wall))
                else:
                    tracker.add(_row(case, kind, reason=payload, wall_s=wall))
            f.release()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
        sched_log.setLevel(old_level)
    return {"name": "dask", "workers": nworkers, "scheduler": scheduler,
            "local_cluster": cluster is not None, "allowed_failures": allowed}


def versions() -> dict[str, str | None]:
    """Versions of Python and of the packages a sweep may use (importlib.metadata only;
    nothing is imported)."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for dist in ("numpy", "dask", "distributed", "plotly", "jinja2",
                 *registry.distributions().values()):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


def to_json_bytes(obj: Any) -> bytes:
    return json.dumps(obj, indent=1, allow_nan=False, sort_keys=False).encode()
