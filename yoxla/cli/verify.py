"""``yoxla verify FILE…``: the leaderboard's admission rule on the command line.

Exits 1 when any named file is excluded (so a pull request's CI fails before review), or a
named folder holds no result file (nothing checked is no pass), 0 otherwise; superseded files
are reported but are not a failure.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from yoxla.safe.text import one_line


def register(sub: Any) -> None:
    p = sub.add_parser(
        "verify",
        help="check result files with the leaderboard's admission rule",
        description="Check result files exactly as the leaderboard admits them; exit 1 if any is excluded.",
    )
    p.add_argument("files", nargs="+", help="result files (JSON), or folders of them")
    p.add_argument("--data-dir", help="a local copy of the v1 data (else $YOXLA_DATA_DIR, else the Hub)")
    p.add_argument(
        "--trusted-keys", help="trusted-keys file (default: ./trusted_keys.json, then the repository's)"
    )
    p.add_argument(
        "--no-hub",
        action="store_true",
        help="never contact the Hub (for v1 data, or a committed suite's Hugging Face datasets)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object per file instead of text")
    p.set_defaults(func=cmd_verify)


def _expand(items: list[str]) -> tuple[list[Path], list[str]]:
    """(files, empty folders): files as given; a folder stands for every result file under it."""
    from yoxla.board.loading import find_result_files

    out: list[Path] = []
    empty: list[str] = []
    for item in items:
        p = Path(item)
        found = find_result_files(p) if p.is_dir() else [p]
        if not found:
            empty.append(item)
        out.extend(found)
    return out, empty


def _score_text(v: Any) -> str:
    """``YOXLA 61.20`` for a benchmark file, ``suite oxu 58.33`` for a suite file."""
    if v.suite is None:
        return f"YOXLA {float(v.scores.get('yoxla', 0.0)):.2f}"
    score = v.scores.get("suite")
    return f"suite {one_line(v.suite, 64)} " + (f"{float(score):.2f}" if score is not None else "-")


def cmd_verify(args: argparse.Namespace) -> int:
    from yoxla.admission.gold import DataSource
    from yoxla.admission.rules import admit, load_trusted_keys
    from yoxla.admission.verdict import EXCLUDED

    paths, empty = _expand(args.files)
    for folder in empty:  # nothing checked is no pass: say so, and fail
        print(f"error: {one_line(folder, 200)} holds no result files (*.json)", file=sys.stderr)
    if not paths:
        return 1
    trusted = load_trusted_keys(args.trusted_keys)
    from yoxla.admission.committed import CommittedSuites

    hub = not args.no_hub
    data = DataSource(data_dir=args.data_dir, allow_hub=hub, suites=CommittedSuites(allow_hub=hub))
    verdicts = admit(paths, trusted=trusted, data=data)
    failed = 0
    for v in verdicts:
        if args.json:
            record = {
                "file": v.path,
                "status": v.status,
                "trust": v.trust,
                "rechecked": v.rechecked,
                "board": v.group,
                "reasons": v.reasons,
                "notes": v.notes,
                "yoxla": v.scores.get("yoxla"),
                **({"suite": v.suite, "suite_score": v.scores.get("suite")} if v.suite else {}),
                # the edition's board a benchmark file (either format) is on; the file's format
                **({"edition": v.edition} if v.edition else {}),
                **({"format": v.result_format} if v.result_format else {}),
            }
            print(json.dumps(record, ensure_ascii=True))  # one line, control characters escaped
        else:
            where = one_line(v.path, 200)
            if v.status == EXCLUDED:
                print(f"EXCLUDED {where}")
            else:
                name, provider = one_line(v.name, 80), one_line(v.provider, 40)
                print(f"{v.status.upper()} {where}: {name} ({provider}), {_score_text(v)}, {v.summary()}")
            for r in v.reasons:
                print(f"  - {one_line(r)}")
            for n in v.notes:
                print(f"  note: {one_line(n)}")
        failed += v.status == EXCLUDED
    total = len(verdicts)
    summary = f"{total - failed} of {total} file(s) admitted or superseded" + (
        f", {failed} excluded" if failed else ""
    )
    print(summary, file=sys.stderr if args.json else sys.stdout)
    return 1 if failed or empty else 0
