"""The architecture holds: dependencies point one way and nothing outside engines/ is
engine-specific.

The import graph here counts every import statement, those inside functions included
(an import moved into a function is still a dependency), and resolves ``from a import b``
to the module ``a.b`` when that is a module. lint-imports (the contracts in
pyproject.toml) checks the layers; these tests check what a contract cannot say.
"""
from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGES = ("harness", "engines", "fixtures")
ENGINE_WORDS = ("mujoco", "pinocchio", "crocoddyl", "drake", "opensim")
BINDINGS = ("mujoco", "pinocchio", "pin", "crocoddyl", "pydrake", "opensim", "mujoco_warp",
            "warp", "engines")


def _modules() -> dict:
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            rel = path.relative_to(ROOT).with_suffix("")
            name = ".".join(rel.parts)
            out[name[:-len(".__init__")] if name.endswith(".__init__") else name] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path):
    """(imported name, line) of every import statement in the module, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".") if is_pkg else name.split(".")[:-1]
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            for a in node.names:
                yield f"{base}.{a.name}", node.lineno


def _resolve(target: str) -> str | None:
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


def _graph() -> dict:
    g = defaultdict(set)
    for name, path in MODULES.items():
        for target, _ in _imports(name, path):
            t = _resolve(target)
            if t and t != name:
                g[name].add(t)
    return g


def _cycles(g: dict) -> list:
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in list(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_cycle_finder_finds_a_cycle():
    """The checker itself can fail: a hand-made cycle is found."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_between_modules():
    assert _cycles(_graph()) == []


def test_no_import_cycle_between_subpackages():
    """harness.<sub> collapsed to one node each (function-level imports counted)."""
    sub = defaultdict(set)
    for a, targets in _graph().items():
        for b in targets:
            pa, pb = (".".join(x.split(".")[:2]) for x in (a, b))
            if pa != pb:
                sub[pa].add(pb)
    assert _cycles(sub) == []


def _outside_engines():
    for name, path in MODULES.items():
        if not name.startswith("engines"):
            yield name, path


def test_nothing_outside_engines_imports_an_engine():
    bad = []
    for name, path in _outside_engines():
        for target, line in _imports(name, path):
            if target.split(".")[0] in BINDINGS:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not bad, bad


# importing a module whose name is data: only the registry does it (importlib.metadata,
# which reads installed distributions and imports nothing, is not import machinery)
NAMED_IMPORTS_AT = "harness.model.registry"
_IMPORT_MACHINERY = ("import_module", "__import__", "find_spec", "find_loader",
                     "spec_from_file_location", "module_from_spec", "reload", "exec_module")


def _named_imports(path: Path) -> list:
    """Every use of the import machinery in the file: importlib (but importlib.metadata)
    imported in any form, and any name or attribute of ``_IMPORT_MACHINERY``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    where = path.relative_to(ROOT)
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            found += [f"{where}:{n.lineno}: import {a.name}" for a in n.names
                      if a.name.split(".")[0] == "importlib"
                      and not a.name.startswith("importlib.metadata")]
        elif isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "importlib":
            if not (n.module or "").startswith("importlib.metadata"):
                found += [f"{where}:{n.lineno}: from {n.module} import {a.name}"
                          for a in n.names if a.name != "metadata"]
        elif isinstance(n, ast.Name) and n.id in _IMPORT_MACHINERY:
            found.append(f"{where}:{n.lineno}: {n.id}")
        elif isinstance(n, ast.Attribute) and n.attr in _IMPORT_MACHINERY:
            found.append(f"{where}:{n.lineno}: .{n.attr}")
    return found


def test_named_import_check_catches_the_machinery(tmp_path):
    p = tmp_path / "x.py"
    p.write_text("import importlib.util\nfrom importlib import import_module\n"
                 "from importlib.metadata import version\nfrom importlib import metadata\n"
                 "m = __import__('os')\nimportlib.util.find_spec('os')\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys.modules[__name__], "ROOT", tmp_path)
        assert _named_imports(p) == ["x.py:1: import importlib.util",
                                     "x.py:2: from importlib import import_module",
                                     "x.py:5: __import__", "x.py:6: .find_spec"]


def test_only_the_registry_imports_by_name():
    """A module name that is data (an engine's adapter, a sweep) is imported by the
    registry alone (harness/model/registry.py ``named_module``), in harness/, engines/ and
    fixtures/ alike."""
    bad = [hit for name, path in MODULES.items() if name != NAMED_IMPORTS_AT
           for hit in _named_imports(path)]
    assert not bad, bad
    assert _named_imports(MODULES[NAMED_IMPORTS_AT]), "the registry imports by name"


MAX_LOCAL_OWN_IMPORTS = 20  # the code-health target (docs/architecture.md)


def _local_own_imports(path: Path) -> list:
    """[(line, has a reason)] of every import of the project's own modules inside a
    function, outside ``if TYPE_CHECKING:``; the reason is a comment on the import's line
    or above the block of imports it starts or continues."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    out = []
    for fn in ast.walk(ast.parse(text)):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.ImportFrom):
                own = n.level > 0 or (n.module or "").split(".")[0] in PACKAGES
            elif isinstance(n, ast.Import):
                own = any(a.name.split(".")[0] in PACKAGES for a in n.names)
            else:
                continue
            if own:
                k = n.lineno - 2  # the comment above a block of imports covers the block
                while k > 0 and lines[k].strip().startswith(("from ", "import ")):
                    k -= 1
                out.append((n.lineno, "#" in lines[n.lineno - 1]
                            or lines[k].strip().startswith("#")))
    return out


def test_local_import_check_sees_a_reasonless_import(tmp_path):
    p = tmp_path / "x.py"
    p.write_text("def f():\n    from harness import api\n\n\ndef g():\n"
                 "    # why\n    from harness.core import io\n    from harness import cli\n"
                 "    x = 1\n    from harness import api\n")
    assert _local_own_imports(p) == [(2, False), (7, True), (8, True), (10, False)]


def test_few_function_level_imports_of_own_modules_each_with_a_reason():
    """The project's module graph is read from module tops: an import of an own module
    inside a function is rare (a lazy package API, a process started before the command's
    imports) and says why. Heavy third-party packages (scipy's sparse, optimize, ...) are
    what a function imports on use instead (tests/unit/test_startup_imports.py)."""
    found = {name: _local_own_imports(path) for name, path in MODULES.items()}
    total = sum(len(v) for v in found.values())
    reasonless = [f"{name}:{line}" for name, v in found.items() for line, ok in v if not ok]
    assert not reasonless, reasonless
    assert total <= MAX_LOCAL_OWN_IMPORTS, total


def _docstrings(tree) -> set:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and n.body and isinstance(n.body[0], ast.Expr) \
                and isinstance(n.body[0].value, ast.Constant):
            out.add(id(n.body[0].value))
    return out


def _engine_tokens(path: Path) -> list:
    """Identifiers, and strings that are tokens rather than prose (no whitespace), naming
    an engine. XML text (the MJCF format's root element is <mujoco>) is a file format, not
    an engine choice."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    found = []
    for n in ast.walk(tree):
        word = None
        if isinstance(n, ast.Name):
            word = n.id
        elif isinstance(n, ast.Attribute):
            word = n.attr
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            word = n.name
        elif isinstance(n, ast.arg):
            word = n.arg
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs \
                and not any(c.isspace() for c in n.value) and "<" not in n.value:
            word = n.value
        if word and any(e in word.lower() for e in ENGINE_WORDS):
            found.append(f"{path.relative_to(ROOT)}:{n.lineno}: {word!r}")
    return found


def test_token_check_catches_an_engine_name(tmp_path):
    p = tmp_path / "x.py"
    p.write_text('def f(engine):\n    return engine == "drake"\n')
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys.modules[__name__], "ROOT", tmp_path)
        assert _engine_tokens(p) == ["x.py:2: 'drake'"]


def test_no_module_outside_engines_names_an_engine():
    bad = [hit for _, path in _outside_engines() for hit in _engine_tokens(path)]
    assert not bad, bad


def test_import_contracts_are_configured_and_kept():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    kinds = [c["type"] for c in cfg["contracts"]]
    assert len(kinds) >= 4 and "layers" in kinds and "acyclic_siblings" in kinds, kinds
    exe = Path(sys.executable).parent / "lint-imports"
    p = subprocess.run([str(exe)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:]
