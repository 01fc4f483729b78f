#!/usr/bin/env python3
"""Write the generated blocks of the README and of each study's findings from the shipped
result sets' tables, so that prose can never disagree with the numbers (knobs/blocks.py).

    findings.py                  rewrite every block of README.md and studies/*/README.md
    findings.py --study NAME     only that study's findings
    findings.py --check          fail, naming each stale block, where any is not what the
                                 tables say (tables as `make paper` rebuilds them)
"""

import argparse
import sys
from pathlib import Path

from knobs import blocks  # beside this script


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--study", help="one study's findings (default: the README and all)")
    parser.add_argument("--set", default=str(blocks.PAPER),
                        help="the folder holding the shipped result sets (default results/paper)")
    args = parser.parse_args(argv)
    if args.study not in (None, "all", *blocks.studies()):
        sys.exit(f"findings.py: no study {args.study!r}; studies: {', '.join(blocks.studies())}")
    root, failed = Path(args.set), []
    for document in blocks.documents(args.study):
        text = document.read_text()
        try:
            if args.check:
                stale = blocks.stale(text, root)
                if stale:
                    failed.append(f"{document.relative_to(blocks.REPO)}: {', '.join(stale)}")
            else:
                document.write_text(blocks.render(text, root))
        except FileNotFoundError as error:
            sys.exit(f"findings.py: {document.relative_to(blocks.REPO)}: {error}")
    if failed:
        sys.exit("these blocks disagree with the tables (run python scripts/findings.py):\n  "
                 + "\n  ".join(failed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
