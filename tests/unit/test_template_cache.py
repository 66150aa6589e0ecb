"""The report's compiled templates are kept in the user's cache folder between commands
(``$XDG_CACHE_HOME/parity-harness``), never beside a bundle or in the repository; a page
rendered from the cache is the page compiled afresh, and a cache folder that cannot be
written or holds damaged entries only costs the compilation."""
from __future__ import annotations

import os
from pathlib import Path

import jinja2

from harness.report import render
from tests.conftest import ROOT

TEMPLATE = "matrix.html.j2"


def _env(cache: render.TemplateCache | None) -> jinja2.Environment:
    """An environment with the report environment's options and loader."""
    env = jinja2.Environment(loader=render.ENV.loader, autoescape=render.ENV.autoescape,
                             undefined=render.ENV.undefined, bytecode_cache=cache)
    env.filters.update(render.ENV.filters)
    return env


def _page(env: jinja2.Environment) -> str:
    cols = [{"engine": "mujoco"}, {"engine": "drake"}]
    return env.get_template(TEMPLATE).render(mcols=cols, mrows=[], heads=["quantity"],
                                             sub="fixture", table_id="t", marks=render.MARKS,
                                             short=render.SHORT)


def test_the_report_environment_caches_in_the_users_cache_folder(monkeypatch, tmp_path):
    cache = render.ENV.bytecode_cache
    assert isinstance(cache, render.TemplateCache)
    assert Path(cache.directory) == render.cache_dir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert render.cache_dir() == tmp_path / "xdg" / "parity-harness"
    assert ROOT not in tmp_path.parents
    # no home folder to expand and no XDG_CACHE_HOME: no cache, never a relative folder
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    monkeypatch.setattr(render.os.path, "expanduser", lambda p: p)
    assert render.cache_dir() is None


def test_a_cached_template_renders_the_page_compiled_afresh(tmp_path):
    folder = tmp_path / "cache"
    fresh = _page(_env(None))
    first = _page(_env(render.TemplateCache(folder, "t-%s.cache")))  # compiles, writes
    entries = list(folder.iterdir())
    assert len(entries) == 1 and entries[0].stat().st_size > 0
    loaded = _env(render.TemplateCache(folder, "t-%s.cache"))
    # the second environment's template comes from the cache: no compilation
    calls = []
    loaded.compile = lambda *a, **k: calls.append(a) or jinja2.Environment.compile(  # type: ignore[method-assign]
        loaded, *a, **k)
    assert _page(loaded) == first == fresh
    assert calls == []


def test_an_unwritable_or_damaged_cache_only_costs_the_compilation(tmp_path):
    fresh = _page(_env(None))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert _page(_env(render.TemplateCache(blocker / "cache", "t-%s.cache"))) == fresh
    folder = tmp_path / "cache"
    _page(_env(render.TemplateCache(folder, "t-%s.cache")))
    (entry,) = folder.iterdir()
    entry.write_bytes(entry.read_bytes()[:40])  # cut short
    assert _page(_env(render.TemplateCache(folder, "t-%s.cache"))) == fresh
    if os.name != "nt" and os.geteuid() != 0:  # a read-only folder (root writes anyway)
        folder.chmod(0o500)
        try:
            assert _page(_env(render.TemplateCache(folder, "u-%s.cache"))) == fresh
        finally:
            folder.chmod(0o700)
