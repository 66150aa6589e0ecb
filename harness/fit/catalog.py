"""Every problem of `harness fit`, listed once (``FitProblem``, harness/fit/fitproblem.py).
The CLI's ``--problem`` and ``--method`` choices and help, the fit bundle's writer and
reader (harness/fit/bundle.py) and the report (harness/report/fit.py) read this list; a
problem is added by writing its module and listing its ``FitProblem`` here (or, for a
test, by ``register``).

Dimensions: none (names and the problems' declarations).
"""
from __future__ import annotations

from harness.core.errors import BadInput
from harness.fit import problem_bounce, problem_bounce2, problem_collocation, problem_dimension
from harness.fit.fitproblem import FitProblem

_PROBLEMS: dict = {p.name: p for p in (problem_collocation.PENDULUM,
                                       problem_collocation.BALANCE,
                                       problem_bounce.PROBLEM, problem_bounce2.PROBLEM,
                                       problem_dimension.PROBLEM)}


def problems() -> tuple:
    """Every registered FitProblem, in the order listed (the CLI's order)."""
    return tuple(_PROBLEMS.values())


def find(name: object) -> FitProblem | None:
    """The FitProblem called ``name``, or None (also for a name that is not text)."""
    return _PROBLEMS.get(name) if isinstance(name, str) else None


def get(name: str) -> FitProblem:
    """The FitProblem called ``name``; BadInput naming ``--problem`` when there is none."""
    p = find(name)
    if p is None:
        raise BadInput("--problem", f"unknown problem {name!r} (known: "
                                    f"{', '.join(_PROBLEMS)})")
    return p


def methods() -> tuple:
    """Every ``--method`` value some problem accepts, first-seen order."""
    return tuple(dict.fromkeys(m for p in _PROBLEMS.values() for m in p.methods))


def register(problem: FitProblem) -> None:
    """Add ``problem`` (after the listed ones); ValueError when its name is taken."""
    if problem.name in _PROBLEMS:
        raise ValueError(f"fit problem {problem.name!r} is already registered")
    _PROBLEMS[problem.name] = problem


def unregister(name: str) -> None:
    """Remove the problem called ``name`` (a test's scratch problem)."""
    del _PROBLEMS[name]
