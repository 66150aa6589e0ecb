"""Every problem of `harness fit`, declared once (``FitProblem``, harness/fit/fitproblem.py).
The CLI's ``--problem`` and ``--method`` choices and help, the fit bundle's writer and
reader (harness/fit/bundle.py) and the report (harness/report/fit.py) read this list; a
problem is added by writing its module and declaring its ``FitProblem`` here (or, for a
test, by ``register``). A declaration names its problem's code by module (``Deferred``),
so that listing the problems (every command builds the CLI's options) imports no solver.

Dimensions: none (names and the problems' declarations).
"""
from __future__ import annotations

from harness.core.errors import BadInput
from harness.fit import METHODS
from harness.fit.fitproblem import Deferred, FitProblem

_COLLOCATION = "harness.fit.problem_collocation"
_BOUNCE = "harness.fit.problem_bounce"
_BOUNCE2 = "harness.fit.problem_bounce2"
_DIMENSION = "harness.fit.problem_dimension"


def _declared(name: str, help: str, module: str, run: Deferred, key_sets: str,
              template: str, **options: object) -> FitProblem:
    """A problem whose run, key sets, report context and summary are ``module``'s."""
    return FitProblem(name, help, run, Deferred(module, key_sets), template,
                      Deferred(module, "report_context"), Deferred(module, "summary"),
                      **options)  # type: ignore[arg-type]  # the options' own types


_PROBLEMS: dict = {p.name: p for p in (
    _declared("pendulum", "damped pendulum, identify p [1/s²]",
              _COLLOCATION, Deferred(_COLLOCATION, "run", ("pendulum",)), "KEY_SETS",
              "fit_section.html.j2", methods=METHODS, studies=("resolution",),
              solvers=("sqp", "ipopt")),
    _declared("balance", "the balance problem",
              _COLLOCATION, Deferred(_COLLOCATION, "run", ("balance",)), "KEY_SETS",
              "fit_section.html.j2", methods=METHODS, solvers=("sqp", "ipopt")),
    # methods: "phases" is problem_bounce.BOUNCE_PHASES; event_kind bounce_events.KIND
    _declared("bounce", "a bouncing ball's restitution under candidate first-impact times",
              _BOUNCE, Deferred(_BOUNCE, "run"), "BOUNCE_KEY_SETS", "fit_bounce.html.j2",
              methods=("midpoint", "phases"), event_kind="impact",
              method_help="'phases' fits every impact time as a parameter by multiple "
                          "shooting whose phases end at the impacts, started from the best "
                          "candidate"),
    _declared("bounce2", "two balls on one plane: the order of their first impacts (and "
                         "each ball's impact count) weighed by evidence",
              _BOUNCE2, Deferred(_BOUNCE2, "run"), "KEY_SETS", "fit_bounce2.html.j2"),
    _declared("dimension", "choose a chain's number of joints on held-out trials",
              _DIMENSION, Deferred(_DIMENSION, "run"), "KEY_SETS",
              "fit_dimension.html.j2"))}


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
