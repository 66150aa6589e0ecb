"""Every public function of harness/core, harness/model and harness/evidence is fully
annotated; the other packages' shares are measured (run this file to print them).

Counted, per package (harness/<package>, harness itself for its top-level modules, and
engines): the public functions, read from the source with ``ast`` (nothing is imported):
module-level functions and methods of module-level classes whose names do not start with
``_``, in modules whose names do not start with ``_`` (``__init__.py`` included); nested
functions and the methods of private classes are not public. A function is fully
annotated when every parameter (``self``/``cls`` of a method and ``*``/``**`` ones
included, the first two excepted) and its return carry an annotation.

    python tests/unit/test_annotations.py     # the share per package, and what is missing
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STRICT = ("harness/core", "harness/model", "harness/evidence")
# Modules of the strict packages not yet annotated, each with the reason (they are also
# the modules pyproject.toml's [tool.mypy] sets aside). Remove an entry once its module is
# annotated; an entry whose module is fully annotated fails the test, so the list only
# shrinks.
PENDING: dict[str, str] = {}


@dataclass(frozen=True)
class Function:
    """One public function: where it is (file, line) and what lacks an annotation."""

    path: str
    line: int
    name: str
    missing: tuple[str, ...]  # parameter names, and "return"

    @property
    def annotated(self) -> bool:
        return not self.missing


def _missing(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> tuple[str, ...]:
    """The parameters (and "return") of ``fn`` without an annotation; the first
    positional parameter of a method (self, cls) needs none, unless it is a
    staticmethod."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
    if method and not static and positional:
        positional = positional[1:]
    params = [*positional, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p)]
    out = [p.arg for p in params if p.annotation is None]
    if fn.returns is None:
        out.append("return")
    return tuple(out)


def public_functions(path: Path) -> list[Function]:
    """The public functions of the module at ``path`` (module docstring's rules)."""
    rel = path.relative_to(ROOT).as_posix()
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
    out = []
    defs = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in tree.body:
        if isinstance(node, defs) and not node.name.startswith("_"):
            out.append(Function(rel, node.lineno, node.name, _missing(node, False)))
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, defs) and not item.name.startswith("_"):
                    out.append(Function(rel, item.lineno, f"{node.name}.{item.name}",
                                        _missing(item, True)))
    return out


def package_of(rel: str) -> str:
    """harness/<package> for a module under it, "harness" for a top-level module of
    harness, the first folder otherwise (engines)."""
    parts = rel.split("/")
    return "/".join(parts[:2]) if parts[0] == "harness" and len(parts) > 2 else parts[0]


def census() -> dict[str, list[Function]]:
    """{package: its public functions} over harness/ and engines/."""
    out: dict[str, list[Function]] = {}
    for top in ("harness", "engines"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path.name.startswith("_") and path.name != "__init__.py":
                continue
            rel = path.relative_to(ROOT).as_posix()
            out.setdefault(package_of(rel), []).extend(public_functions(path))
    return out


def share(functions: list[Function]) -> tuple[int, int]:
    """(fully annotated, all) of ``functions``."""
    return sum(f.annotated for f in functions), len(functions)


def test_strict_packages_are_fully_annotated() -> None:
    found = census()
    unannotated = [f"{f.path}:{f.line} {f.name}: no annotation for {', '.join(f.missing)}"
                   for pkg in STRICT for f in found[pkg]
                   if not f.annotated and f.path not in PENDING]
    assert not unannotated, "\n".join(unannotated)


def test_pending_modules_are_real_and_still_pending() -> None:
    found = [f for fs in census().values() for f in fs]
    for rel, why in PENDING.items():
        assert why.strip(), rel
        assert (ROOT / rel).is_file(), f"{rel} is listed as pending but does not exist"
        assert any(f.path == rel and not f.annotated for f in found), \
            f"{rel} is fully annotated now: remove it from PENDING (and from [tool.mypy])"


def test_the_census_reads_what_it_should() -> None:
    found = census()
    assert {"harness/core", "harness/model", "harness/evidence", "harness",
            "engines"} <= set(found)
    names = {f.name for f in found["harness/core"]}
    assert "printable" in names and "FixtureSpec.validate" in names
    assert not any(n.startswith("_") or "._" in n for fs in found.values() for f in fs
                   for n in [f.name])


def main() -> None:
    found = census()
    print(f"{'package':<22}{'annotated':>10}{'public':>8}{'share':>8}")
    for pkg in sorted(found):
        done, total = share(found[pkg])
        pct = 100.0 * done / total if total else 100.0
        print(f"{pkg:<22}{done:>10}{total:>8}{pct:>7.1f}%")
    done, total = share([f for fs in found.values() for f in fs])
    print(f"{'all':<22}{done:>10}{total:>8}{100.0 * done / total:>7.1f}%")


if __name__ == "__main__":
    main()
