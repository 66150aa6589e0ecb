"""Screenshots of every kind of report at a desktop (1400×900) and a phone (390×844)
viewport, written to docs/img/KIND-WIDTH.png (the viewport only, not the whole page) and
shown in docs/evidence.md ("What each report looks like").

Each report comes from a small real run of its command into a scratch folder (the same runs
as tests/e2e/test_report_screens.py); the swing is the bundled capture with --quick (about
two and a half minutes). Needs Chromium (/usr/bin/chromium; scripts/install-chromium.sh).

    python scripts/screenshots.py [--work DIR] [--only KIND,KIND]
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "fixtures" / "golden"
IMG = ROOT / "docs" / "img"
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WIDTHS = {1400: 900, 390: 844}  # [CSS px] width → height


def harness(*args: object) -> int:
    """Run ``harness ARGS`` (this checkout) and return its exit code (0 or 1 expected)."""
    p = subprocess.run([sys.executable, "-m", "harness.launch", *map(str, args)], cwd=ROOT,
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit(f"harness {' '.join(map(str, args))}: exit {p.returncode}\n"
                         f"{p.stderr[-2000:]}")
    return p.returncode


def make(work: Path, kind: str) -> Path:
    """The index.html of one small real run of ``kind`` under ``work``."""
    out = work / kind
    shutil.rmtree(out, ignore_errors=True)
    if kind == "parity":
        harness("parity", "--fixture", "pendulum", "--samples", "3", "--out", out, "--quiet")
    elif kind == "qualify":
        harness("qualify", "--samples", "2", "--out", out, "--quiet")
    elif kind == "diagnose":
        harness("diagnose", GOLDEN / "pendulum.urdf", "--samples", "3", "--out", out, "--quiet")
    elif kind == "replay":
        harness("synth", "chain7", "--out", work / "cand.json", "--duration", "0.2")
        harness("replay", work / "cand.json", "--out", out, "--quiet")
    elif kind == "fit":
        harness("fit", "--problem", "pendulum", "--n", "1000", "--p0", "60", "--out", out)
    elif kind == "sweep":
        harness("sweep", "contact", "--quick", "--workers", "1", "--out", out, "--quiet")
    elif kind == "survey":
        src = work / "models"
        shutil.rmtree(src, ignore_errors=True)
        src.mkdir()
        shutil.copy(GOLDEN / "pendulum.urdf", src / "pendulum.urdf")
        harness("parity", "--batch", src, "--workers", "1", "--samples", "3", "--out", out,
                "--quiet")
    elif kind == "swing":
        harness("swing", ROOT / "data" / "swing" / "driver.c3d", "--quick", "--out", out,
                "--quiet")
    elif kind == "track":
        walk = ROOT / "data" / "opensim_models" / "gait2392_walk1"
        harness("track", walk / "subject01_simbody.osim", walk / "subject01_walk1.trc",
                "--loads", walk / "subject01_walk1_grf.xml", "--start", "0.5", "--end", "1.0",
                "--lowpass-hz", "6", "--out", out, "--quiet")
    else:
        raise SystemExit(f"unknown kind {kind!r}")
    return out / "index.html"


KINDS = ("parity", "qualify", "diagnose", "replay", "fit", "sweep", "survey", "swing",
         "track")


def small(path: Path) -> None:
    """Rewrite the PNG at ``path`` with a 128-colour palette (text and flat colours stay
    sharp; the file is about a third of its size)."""
    img = Image.open(path).convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT)
    img.save(path, optimize=True)


def shoot(pages: dict[str, Path]) -> list[Path]:
    """docs/img/KIND-WIDTH.png of every page at every width; returns the files written."""
    IMG.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            for kind, html in pages.items():
                for width, height in WIDTHS.items():
                    page = browser.new_page(viewport={"width": width, "height": height})
                    page.goto(html.resolve().as_uri())
                    page.wait_for_load_state("load")
                    if page.locator("div.plot[data-spec]").count():
                        page.wait_for_selector("html[data-plots-drawn]", timeout=60_000)
                    path = IMG / f"{kind}-{width}.png"
                    page.screenshot(path=str(path))
                    page.close()
                    small(path)
                    written.append(path)
        finally:
            browser.close()
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=None,
                    help="scratch folder for the runs (default: a temporary folder)")
    ap.add_argument("--only", default=None, help="comma-separated kinds (default: all)")
    args = ap.parse_args()
    kinds = args.only.split(",") if args.only else list(KINDS)
    work = args.work or Path(tempfile.mkdtemp(prefix="screenshots-"))
    work.mkdir(parents=True, exist_ok=True)
    pages = {}
    for kind in kinds:
        print(f"{kind}: running", flush=True)
        pages[kind] = make(work, kind)
    for path in shoot(pages):
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size // 1024} kB)")


if __name__ == "__main__":
    main()
