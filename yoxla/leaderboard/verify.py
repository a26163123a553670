"""``yoxla verify FILE…``: the leaderboard's admission rule on the command line.

Exits 1 when any named file is excluded (so a pull request's CI fails before review), 0
otherwise; superseded files are reported but are not a failure. Imports stay light: the
admission machinery is imported when the command runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser(
        "verify",
        help="check result files with the leaderboard's admission rule",
        description="Check result files exactly as the leaderboard admits them; exit 1 if any is excluded.",
    )
    p.add_argument("files", nargs="+", help="result files (JSON)")
    p.add_argument("--data-dir", help="a local copy of the v1 data (else $YOXLA_DATA_DIR, else the Hub)")
    p.add_argument(
        "--trusted-keys", help="trusted-keys file (default: ./trusted_keys.json, then the repository's)"
    )
    p.add_argument("--no-hub", action="store_true", help="never contact the Hub for v1 data")
    p.add_argument("--json", action="store_true", help="print one JSON object per file instead of text")
    p.set_defaults(func=cmd_verify)


def cmd_verify(args: argparse.Namespace) -> int:
    from yoxla.leaderboard.admission import EXCLUDED, admit, load_trusted_keys
    from yoxla.leaderboard.data import DataSource

    paths = [Path(f) for f in args.files]
    trusted = load_trusted_keys(args.trusted_keys)
    verdicts = admit(
        paths, trusted=trusted, data=DataSource(data_dir=args.data_dir, allow_hub=not args.no_hub)
    )
    failed = 0
    for v in verdicts:
        if args.json:
            print(
                json.dumps(
                    {
                        "file": v.path,
                        "status": v.status,
                        "trust": v.trust,
                        "rechecked": v.rechecked,
                        "reasons": v.reasons,
                        "notes": v.notes,
                        "yoxla": v.scores.get("yoxla"),
                    },
                    ensure_ascii=False,
                )
            )
        else:
            if v.status == EXCLUDED:
                print(f"EXCLUDED {v.path}")
            else:
                score = float(v.scores.get("yoxla", 0.0))
                print(f"{v.status.upper()} {v.path}: {v.name} ({v.provider}), YOXLA {score:.2f}, {v.trust}")
            for r in v.reasons:
                print(f"  - {r}")
            for n in v.notes:
                print(f"  note: {n}")
        failed += v.status == EXCLUDED
    total = len(verdicts)
    summary = f"{total - failed} of {total} file(s) admitted" + (f", {failed} excluded" if failed else "")
    print(summary, file=sys.stderr if args.json else sys.stdout)
    return 1 if failed else 0
