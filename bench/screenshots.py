"""Screenshots of every view at 1440×1000 and 390×844, so anyone can look at the app without starting it.

    python bench/screenshots.py [--synthetic] [--out bench/out/screens] [--full-page] [--docs]
        [--docs-only] [--sizes 1440x1000 390x844]

Starts the app on the committed results (or, with ``--synthetic``, on 100 full-size synthetic
v1 models next to the committed sample files), opens every tab on both editions in headless
Chromium and writes ``<edition>-<tab>.png`` (``<edition>-<tab>-390.png`` at a phone's width) under
``--out`` (not committed); a tab a board does not offer (Blocks and Calibration on a suite) is skipped. ``--editions`` takes
board ids: ``v1``, ``sample``, ``suite:<id>`` (default: the two editions and ``suite:oxu``).
``--docs`` also writes the small PNGs the README shows, one per main view, under ``docs/screens/``;
``--docs-only`` shoots only those views (eight pictures at both widths instead of every tab).
"""

from __future__ import annotations

import argparse
import base64
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yoxla.testing.browser import chrome, errors, open_page, serve, wait_rendered

TABS = (
    ("leaderboard", "Leaderboard"),
    ("model", "Model"),
    ("tasks", "Tasks"),
    ("blocks", "Blocks"),
    ("breakdowns", "Breakdowns"),
    ("diagnostics", "Diagnostics"),
    ("calibration", "Calibration"),
    ("explorer", "Error explorer"),
    ("compare", "Compare"),
    ("methodology", "Methodology"),
    ("submit", "Submit"),
    ("about", "About"),
)
DOCS = {  # README pictures: (edition, tab) -> file name
    ("v1", "leaderboard"): "leaderboard.png",
    ("v1", "model"): "model.png",
    ("v1", "tasks"): "task.png",
    ("v1", "diagnostics"): "diagnostics.png",
    ("v1", "calibration"): "calibration.png",
    ("sample", "explorer"): "explorer.png",
    ("suite:oxu", "leaderboard"): "suite.png",
}
NARROW_DOCS = {("v1", "leaderboard"): "leaderboard-390.png"}  # the first screen on a phone


def shoot(d: object, path: Path, full_page: bool, width: int = 1440, height: int = 1000) -> None:
    if full_page:
        h = int(d.execute_script("return document.documentElement.scrollHeight"))  # type: ignore[attr-defined]
        d.execute_cdp_cmd(  # type: ignore[attr-defined]
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": min(h, 12000), "deviceScaleFactor": 1, "mobile": False},
        )
        time.sleep(0.5)
    shot = d.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})  # type: ignore[attr-defined]
    path.write_bytes(base64.b64decode(shot["data"]))
    d.execute_cdp_cmd(  # type: ignore[attr-defined]
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )


def small_png(src: Path, dst: Path, width: int = 960) -> None:
    """A smaller copy for the README (Pillow when installed, else the full-size file)."""
    try:
        from PIL import Image
    except ImportError:
        dst.write_bytes(src.read_bytes())
        return
    with Image.open(src) as im:
        h = round(im.height * width / im.width)
        im.convert("RGB").resize((width, h), Image.LANCZOS).quantize(colors=128).save(dst, optimize=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--synthetic", action="store_true", help="100 synthetic full-size v1 models")
    ap.add_argument("--out", default="bench/out/screens")
    ap.add_argument("--full-page", action="store_true", help="the whole page, not just the first 1000 px")
    ap.add_argument("--docs", action="store_true", help="also write the README's small PNGs to docs/screens/")
    ap.add_argument(
        "--docs-only", action="store_true", help="only the views the README shows (implies --docs)"
    )
    ap.add_argument("--editions", nargs="+", default=["v1", "sample", "suite:oxu"])
    ap.add_argument("--sizes", nargs="+", default=["1440x1000", "390x844"], help="WIDTHxHEIGHT each")
    args = ap.parse_args()
    args.docs = args.docs or args.docs_only
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = Path("results")
    if args.synthetic:
        results = Path(tempfile.mkdtemp(prefix="yoxla-screens-")) / "results"
    sizes = [tuple(int(n) for n in size.lower().split("x")) for size in args.sizes]
    with serve(results, synthetic=args.synthetic) as url:
        for width, height in sizes:
            suffix = "" if width >= 1000 else f"-{width}"
            docs_for = DOCS if not suffix else NARROW_DOCS
            with chrome(width, height) as d:
                d.execute_cdp_cmd(
                    "Emulation.setDeviceMetricsOverride",
                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                )
                for edition in args.editions:
                    for tab_id, title in TABS:
                        if args.docs_only and (edition, tab_id) not in docs_for:
                            continue
                        open_page(d, url, edition=edition, tab=tab_id)  # narrow tabs fold into a menu
                        if _selected(d) != title:
                            continue  # a tab this board does not offer
                        wait_rendered(d)
                        problems = errors(d)
                        path = out / f"{edition.replace(':', '-')}-{tab_id}{suffix}.png"
                        shoot(d, path, args.full_page, width, height)
                        print(f"{path}{'  PROBLEMS: ' + '; '.join(problems) if problems else ''}", flush=True)
                        if args.docs and (edition, tab_id) in docs_for:
                            docs = Path("docs/screens")
                            docs.mkdir(parents=True, exist_ok=True)
                            if args.full_page:
                                shoot(d, out / "_docs.png", False, width, height)
                                small_png(
                                    out / "_docs.png", docs / docs_for[(edition, tab_id)], min(960, width)
                                )
                            else:
                                small_png(path, docs / docs_for[(edition, tab_id)], min(960, width))


def _selected(d: object) -> str:
    found = d.find_elements("css selector", "button[role=tab][aria-selected=true]")  # type: ignore[attr-defined]
    return str(found[0].get_attribute("textContent") or "").strip() if found else ""


if __name__ == "__main__":
    main()
