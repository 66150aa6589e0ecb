"""Errors the harness raises. Each carries what the CLI prints as one line.

Exit codes (harness/cli.py): BadInput and EngineUnavailable → 2; a failed comparison → 1.
"""
from __future__ import annotations


def printable(text: object) -> str:
    """``text`` with every control character (ANSI escapes, carriage returns, NUL, …)
    written as a Python escape (``\\x1b``), so that a name read from a file can never
    drive the terminal it is printed on; other characters (unicode included) unchanged."""
    return "".join(c if c.isprintable() or c == " " else
                   c.encode("unicode_escape").decode("ascii") for c in str(text))


class HarnessError(Exception):
    """Base class; ``str(e)`` is the one-line message shown to the user."""

    exit_code = 2


class BadInput(HarnessError):
    """An input file, option or value is wrong. ``where`` names the file or option."""

    def __init__(self, where: str, problem: str):
        self.where = printable(where)
        # one line, always; no raw control characters from a file
        self.problem = printable(" ".join(str(problem).split()))
        super().__init__(f"{self.where}: {self.problem}")


class EngineUnavailable(HarnessError):
    """An engine was requested but cannot be imported or built on this machine."""

    def __init__(self, engine: str, why: str):
        self.engine = engine
        super().__init__(f"engine {engine} is unavailable: {' '.join(str(why).split())}")


class ModelRejected(HarnessError):
    """An available engine refused to load one model (e.g. MuJoCo's 'mass and inertia of
    moving bodies must be larger than mjMINVAL'). The stage runner records it as an
    ``error`` row for that engine and model; the other engines go on."""

    exit_code = 1

    def __init__(self, engine: str, why: str):
        self.engine = engine
        super().__init__(f"{engine} cannot load this model: {' '.join(str(why).split())}")


class NotProvided(Exception):
    """The engine has no API of its own for this quantity (e.g. Crocoddyl frame poses).

    Raised instead of repeating another engine's answer under this engine's name; the
    stage runner records it as "not provided by <engine>" (never as a pass)."""

    def __init__(self, engine: str, quantity: str, why: str):
        self.engine, self.quantity, self.why = engine, quantity, why
        super().__init__(f"{engine} provides no {quantity}: {why}")
