"""The calibration, gate and annotation modules stay light to import."""

from __future__ import annotations

import subprocess
import sys


def test_light_modules_import_no_torch_transformers_or_sklearn():
    code = (
        "import sys, yoxla, yoxla.score.calibration, yoxla.score.calibration.metrics, yoxla.baselines.gate, "
        "yoxla.annotation, yoxla.annotation.cli, yoxla.cli.main; yoxla.cli.main.build_parser(); "
        "print([m for m in ('torch', 'transformers', 'sklearn', 'scipy') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
