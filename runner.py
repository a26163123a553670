#!/usr/bin/env python
"""Evaluate a model on YOXLA: ``python runner.py --provider P --model M --block all``.

The same as ``yoxla run …``; see ``python runner.py --help`` and docs/running.md.
"""

import sys

from yoxla.cli.main import run

if __name__ == "__main__":
    sys.exit(run(["run", *sys.argv[1:]]))
