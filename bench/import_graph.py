"""The package's import graph: module-level cycles, module and line counts, long modules.

    python bench/import_graph.py [--json FILE] [--package DIR]

Reads ``yoxla/`` statically (``ast``; nothing is imported, see ``yoxla/testing/imports.py``) and
prints the strongly connected components of its module-level imports (each one a cycle), the
count of function-level imports (kept apart: they cannot make a cycle at import time), the module
and line counts, and every module over 600 lines. ``--json`` writes the same figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from yoxla.testing.imports import LONG_MODULE_LINES, build_graph  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    ap.add_argument(
        "--package", type=Path, default=ROOT / "yoxla", help="another copy (e.g. an older commit's)"
    )
    args = ap.parse_args()
    graph = build_graph(args.package, "yoxla")
    figures = graph.figures()
    cycles = graph.cycles()
    print(f"modules: {figures['modules']}   lines: {figures['lines']:,}")
    print(f"module-level import cycles: {len(cycles)} ({figures['modules_in_cycles']} modules)")
    for i, comp in enumerate(cycles, 1):
        print(f"  {i}. {' <-> '.join(comp)}")
    hidden = graph.cycles(function_level=True)
    print(
        f"function-level imports: {figures['function_level_imports']} (cycles when counted too: {len(hidden)})"
    )
    for i, comp in enumerate(hidden, 1):
        print(f"  {i}. {' <-> '.join(comp)}")
    long = graph.long_modules()
    print(f"modules over {LONG_MODULE_LINES} lines: {len(long)}")
    for name, lines in long:
        print(f"  {lines:>5}  {name}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
