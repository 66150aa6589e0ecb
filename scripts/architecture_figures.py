"""The code-health figures docs/architecture.md states beside their targets, measured on
the working tree:

    python scripts/architecture_figures.py

* function-level import statements (an import inside a function), all of them and those
  of the project's own modules (harness, engines, fixtures);
* functions longer than 100 lines (from ``def`` to the last line of the body);
* public functions (name not starting with ``_``, methods included) fully annotated
  (every parameter but self/cls, and the return), per package;
* the modules that use the import machinery (``importlib`` but ``importlib.metadata``,
  ``__import__``): importing a module whose name is data;
* the lines of docs/swing.md.

Prints one line per figure; exits 0 (a measurement, not a gate: the tests hold the rules).
"""
from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OWN = ("harness", "engines", "fixtures")
LONG = 100


def _files():
    for pkg in OWN:
        yield from sorted((ROOT / pkg).rglob("*.py"))


def _own(node) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] in OWN
    return any(a.name.split(".")[0] in OWN for a in node.names)


def _import_machinery(tree) -> bool:
    """Whether the module imports by name: importlib (but importlib.metadata, which only
    reads installed packages' metadata) or __import__."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Import) and any(
                a.name.split(".")[0] == "importlib" and not a.name.startswith("importlib.metadata")
                for a in n.names):
            return True
        if isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "importlib" \
                and not (n.module or "").startswith("importlib.metadata") \
                and not any(a.name == "metadata" for a in n.names):
            return True
        if isinstance(n, ast.Name) and n.id == "__import__":
            return True
    return False


def _annotated(fn) -> bool:
    a = fn.args
    params = a.posonlyargs + a.args + a.kwonlyargs
    params = [p for p in params if p.arg not in ("self", "cls")]
    extra = [x for x in (a.vararg, a.kwarg) if x is not None]
    return fn.returns is not None and all(p.annotation is not None for p in params + extra)


def measure() -> dict:
    local_imports = own_local = 0
    own_by_file: Counter = Counter()
    long_fns = []
    public: Counter = Counter()
    annotated: Counter = Counter()
    importlib_users = []
    for path in _files():
        rel = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if _import_machinery(tree):
            importlib_users.append(rel)
        pkg = "/".join(path.relative_to(ROOT).parts[:2]) if path.parent != ROOT / "harness" \
            else rel
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            n = fn.end_lineno - fn.lineno + 1
            if n > LONG:
                long_fns.append((n, f"{rel}:{fn.name}"))
            if not fn.name.startswith("_"):
                public[pkg] += 1
                annotated[pkg] += _annotated(fn)
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    local_imports += 1
                    if _own(node):
                        own_local += 1
                        own_by_file[rel] += 1
    return {"local_imports": local_imports, "own_local_imports": own_local,
            "own_by_file": own_by_file, "long_functions": sorted(long_fns, reverse=True),
            "public": public, "annotated": annotated, "importlib": importlib_users}


def main() -> int:
    m = measure()
    print(f"function-level imports: {m['local_imports']} "
          f"({m['own_local_imports']} of the project's own modules)")
    for f, n in m["own_by_file"].most_common(8):
        print(f"  {n:4d} {f}")
    print(f"functions over {LONG} lines: {len(m['long_functions'])}")
    for n, name in m["long_functions"]:
        print(f"  {n:4d} {name}")
    tot_p, tot_a = sum(m["public"].values()), sum(m["annotated"].values())
    print(f"public functions fully annotated: {tot_a} of {tot_p} "
          f"({100.0 * tot_a / max(tot_p, 1):.0f} %)")
    for pkg in sorted(m["public"]):
        p, a = m["public"][pkg], m["annotated"][pkg]
        print(f"  {pkg:32s} {a:4d} of {p:4d} ({100.0 * a / p:.0f} %)")
    print(f"modules importing by name: {', '.join(m['importlib']) or 'none'}")
    swing = ROOT / "docs" / "swing.md"
    if swing.is_file():
        print(f"docs/swing.md: {len(swing.read_text().splitlines())} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
