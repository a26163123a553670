"""No module over about 600 lines (issue 13), apart from the ones known to be long today.

Read statically (``yoxla.testing.imports``), like the import graph. The list below only shrinks:
a module leaves it when it is split or (the built-in engine's) deleted.
"""

from __future__ import annotations

from pathlib import Path

import yoxla
from yoxla.testing.imports import build_graph

PACKAGE = Path(yoxla.__file__).parent

KNOWN_LONG: set[str] = set()


def test_no_new_module_over_600_lines():
    long = {name: lines for name, lines in build_graph(PACKAGE).long_modules()}
    new = {name: lines for name, lines in long.items() if name not in KNOWN_LONG}
    assert new == {}, f"split these by what a newcomer would look for: {new}"
