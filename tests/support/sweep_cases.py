"""A small real sweep for the sweep executor's tests (harness/sweep.py).

Dimension legend: C cases. Each case rolls the catalog ``pendulum`` (nq = nv = 1) out with
classical RK4 over Pinocchio's forward dynamics (``PinocchioAdapter.forward_dynamics``,
pin.aba) from (q0_rad, v0_radps) under a constant torque tau_Nm for t_end_s with step
dt_s; metrics are the final state and the largest speed. The test recomputes every case
independently with the MuJoCo adapter.

Special cases: ``crash_case()`` steps Drake's SAP solver with a world ball constraint,
which segfaults the worker process (engines/drake.py sap_world_ball_constraint_step);
``error_case()`` has dt_s = 0, which run_case rejects with ValueError;
``slow_case()`` needs 2·10⁷ steps, minutes (for the timeout test).

Failure modes (``failing_case``): a case fails as ``fail`` says — ``segv`` (SIGSEGV),
``abort`` (os.abort, SIGABRT: what an uncaught C++ exception does), ``cxx`` (raises
MemoryError("std::bad_alloc"), which is how a C++ std::bad_alloc reaches Python through
pybind11), ``exit`` (os._exit(3)) — after writing "process-id clock" to ``pid_dir``/case_id;
other cases return {"pid", "t_ns"}, so a test can tell which process ran what, and when
(t_ns: CLOCK_MONOTONIC [ns], one clock for every process of the machine).
``DiesBeforeReady`` kills the worker processes it is sent to before they report ready, a
given number of times. ``contact_lost_damping`` is the contact sweep's case with the
damping term lost from the law the rollout uses (a real defect for the verdicts to catch).
"""
from __future__ import annotations

import functools

import numpy as np

T_END_S = 0.2


@functools.lru_cache(maxsize=None)
def _adapter(engine: str):
    from harness.model import registry
    from harness.model.prepared import prepare_fixture

    return registry.adapter_class(engine)(prepare_fixture("pendulum"))


def grid(quick: bool = False) -> list:
    """C = 10 q0 × 5 v0 × 4 dt = 200 cases (quick: 2 × 2 × 2 = 8)."""
    q0s = np.linspace(-2.0, 2.0, 2 if quick else 10)
    v0s = np.linspace(-3.0, 3.0, 2 if quick else 5)
    dts = (0.01, 0.005) if quick else (0.02, 0.01, 0.005, 0.0025)
    cases = []
    for q0 in q0s:
        for v0 in v0s:
            for dt in dts:
                cases.append({"case_id": len(cases), "q0_rad": float(q0),
                              "v0_radps": float(v0), "dt_s": float(dt), "tau_Nm": 0.5,
                              "t_end_s": T_END_S})
    return cases


def rollout(engine: str, case: dict) -> dict:
    """RK4 of the pendulum with ``engine``'s forward dynamics: {q_end_rad, v_end_radps,
    max_abs_v_radps}."""
    dt = case["dt_s"]
    if not dt > 0:
        raise ValueError(f"dt_s must be > 0, got {dt}")
    fd = _adapter(engine).forward_dynamics
    tau = np.array([case["tau_Nm"]])
    n = int(round(case["t_end_s"] / dt))
    q, v = np.array([case["q0_rad"]]), np.array([case["v0_radps"]])
    vmax = abs(float(v[0]))
    for _ in range(n):
        k1q, k1v = v, fd(q, v, tau)
        k2q, k2v = v + 0.5 * dt * k1v, fd(q + 0.5 * dt * k1q, v + 0.5 * dt * k1v, tau)
        k3q, k3v = v + 0.5 * dt * k2v, fd(q + 0.5 * dt * k2q, v + 0.5 * dt * k2v, tau)
        k4q, k4v = v + dt * k3v, fd(q + dt * k3q, v + dt * k3v, tau)
        q = q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)
        v = v + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        vmax = max(vmax, abs(float(v[0])))
    return {"q_end_rad": float(q[0]), "v_end_radps": float(v[0]), "max_abs_v_radps": vmax}


def run_case(case: dict) -> dict:
    if case.get("crash"):
        from engines.drake import sap_world_ball_constraint_step

        return sap_world_ball_constraint_step()
    return rollout("pinocchio", case)


def crash_case() -> dict:
    return {"case_id": 10_000, "q0_rad": 0.0, "v0_radps": 0.0, "dt_s": 0.001, "tau_Nm": 0.0,
            "t_end_s": 0.01, "crash": True}


def error_case() -> dict:
    return {"case_id": 10_001, "q0_rad": 0.0, "v0_radps": 0.0, "dt_s": 0.0, "tau_Nm": 0.0,
            "t_end_s": T_END_S}


def slow_case() -> dict:
    return {"case_id": 10_002, "q0_rad": 0.1, "v0_radps": 0.0, "dt_s": 1e-8, "tau_Nm": 0.0,
            "t_end_s": T_END_S}


def noop_case(case: dict) -> dict:
    """No work: the executor's own per-case cost (bench/sweep_overhead.py)."""
    return {"x": case["case_id"]}


def segfault_case(case: dict) -> dict:
    """A deliberate SIGSEGV of the calling process (cheaper than Drake's, for measuring
    crash recovery in bench/sweep_overhead.py); other cases do no work."""
    if case.get("crash"):
        import os
        import signal

        os.kill(os.getpid(), signal.SIGSEGV)
    return {"x": case["case_id"]}


def numpy_case(case: dict) -> dict:
    """Metrics as numpy scalars (what engine code often returns)."""
    return {"n": np.int64(case["case_id"]), "flag": np.bool_(True),
            "x_m": np.float64(case["case_id"]) / 4}


def failing_case(case: dict) -> dict:
    """Fails the way ``case["fail"]`` says (module docstring), else {"pid": process id,
    "t_ns": monotonic clock [ns]}."""
    import os
    import signal
    import time
    from pathlib import Path

    how = case.get("fail")
    if how:
        Path(case["pid_dir"], str(case["case_id"])).write_text(
            f"{os.getpid()} {time.monotonic_ns()}")
    if how == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif how == "abort":
        os.abort()
    elif how == "cxx":
        raise MemoryError("std::bad_alloc")
    elif how == "exit":
        os._exit(3)
    return {"pid": os.getpid(), "t_ns": time.monotonic_ns()}


class DiesBeforeReady:
    """``failing_case`` as a run_case that kills a worker process before the worker
    reports ready: unpickled in any process but the one whose id ``flag`` (a file: "pid n")
    holds, while n > 0, it counts n down and sends that process SIGSEGV (the sweep's
    workers unpickle run_case as they start, before they read any case)."""

    def __init__(self, flag: str):
        self.flag = flag

    def __reduce__(self):
        return (_dies_before_ready, (self.flag,))

    def __call__(self, case: dict) -> dict:
        return failing_case(case)


def _dies_before_ready(flag: str) -> DiesBeforeReady:
    import os
    import signal
    from pathlib import Path

    p = Path(flag)
    pid, n = map(int, p.read_text().split())
    if pid != os.getpid() and n > 0:
        p.write_text(f"{pid} {n - 1}")
        os.kill(os.getpid(), signal.SIGSEGV)
    return DiesBeforeReady(flag)


def contact_lost_damping(case: dict) -> dict:
    """The contact sweep's metrics of ``case`` from a rollout whose law lost its damping
    (d = 0), measured against the declared law's closed forms."""
    from harness.sweep import contact

    return contact.simulate(case, law_overrides={"damping": 0.0})
