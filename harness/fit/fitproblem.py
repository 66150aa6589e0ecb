"""What a problem of `harness fit` is: one ``FitProblem`` (this module), declared once in
harness/fit/catalog.py (its name, options and help, and its code named by module, as
``Deferred``: the problem's module and solvers are imported when the problem runs, is read
back or rendered, not when the CLI lists the problems). The CLI's choices and
help, the fit bundle's writer and reader (harness/fit/bundle.py), the report
(harness/report/fit.py) and the CLI's summary line all iterate that list; none of them
names a problem. (Not harness/fit/trajectory.py's ``FitProblem``, the spline fit's
problem description that the swing and the dimension problem build.)

Dimensions: none of its own; a problem's ``run`` returns fit.json's document (JSON data)
and arrays.npz's arrays (name → ndarray, each with the dimensions its problem module
states), ``report_context`` reads them back.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from harness.model.registry import named_module

# fit.json's schema id and version (harness/fit/bundle.py), every problem's document
SCHEMA = "harness-fit"
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Deferred:
    """``name`` in the module ``module`` (a problem's module, harness/fit/problem_*.py),
    looked up when first used: ``get()`` the object; calling it calls that function with
    ``args`` first, then the call's own arguments (e.g. ``Deferred(M, "run",
    ("pendulum",))(req)`` is ``M.run("pendulum", req)``)."""

    module: str
    name: str
    args: tuple = ()

    def get(self) -> Any:
        """The named object, its module imported now if it was not."""
        return getattr(named_module(self.module), self.name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.get()(*self.args, *args, **kwargs)


@dataclass(frozen=True)
class FitRequest:
    """The options of `harness fit` as the user gave them (None: not given): ``method``
    (a collocation scheme, or a problem's own method), ``n`` nodes, ``seed`` (≥ 0 checked
    by the problem), ``p0`` [the problem's parameter unit], ``process_noise``,
    ``study_grid`` (harness/fit/resolution.py ``request``: None without ``--study``),
    ``events`` (harness/fit/schedules.py EventObservation, from ``--event``), ``solver``
    (``--solver``: one of the problem's ``solvers``; None for its default)."""

    method: str = "midpoint"
    n: int | None = None
    seed: int = 0
    p0: float | None = None
    process_noise: bool = False
    study_grid: dict | None = None
    events: tuple = ()
    solver: str | None = None


@dataclass(frozen=True)
class FitProblem:
    """One problem of `harness fit`.

    * ``name``: the ``--problem`` value, and fit.json's ``problem``;
    * ``help``: its clause of the ``--problem`` help text;
    * ``run(FitRequest)`` → {"json": fit.json document, "arrays": arrays.npz}; BadInput
      (naming the option) for an option that does not apply, before anything runs;
    * ``key_sets``: the field sets of the fit.json documents it writes, and wrote before
      (a bundle is read back only with one of them, ``study`` aside), or a ``Deferred``
      naming them (``fields()`` gives them either way);
    * ``template`` (harness/report/templates) and ``report_context(doc, arrays)`` → the
      template's context besides ``fit`` (the document), ``css`` and ``scripts``;
    * ``summary(doc, bundle)`` → (the CLI's JSON summary fields besides bundle, report,
      problem and converged; the lines it prints; the exit code);
    * ``methods``: the ``--method`` values it accepts (the CLI offers their union),
      ``method_help`` its clause of the ``--method`` help (or "");
    * ``studies``: the ``--study`` values it accepts;
    * ``event_kind``: its events' name (``--event impact1=…`` for "impact"; "" when it has
      none, and ``--event`` is refused);
    * ``solvers``: the ``--solver`` values it accepts, its default first (none: the option
      is refused).
    """

    name: str
    help: str
    run: Callable
    key_sets: tuple | Deferred
    template: str
    report_context: Callable
    summary: Callable
    methods: tuple = ("midpoint",)
    method_help: str = ""
    studies: tuple = ()
    event_kind: str = ""
    solvers: tuple = ()

    def fields(self) -> tuple:
        """``key_sets``, looked up in the problem's module when declared there."""
        k = self.key_sets
        return k.get() if isinstance(k, Deferred) else k
