#!/usr/bin/env python3
"""Write what a framework compiled for the identity function: its graph (debugprint) and its
profiler's summary. On the CPU the graph is one deep copy: no host-device transfer op exists.
"""

import argparse
import datetime
import os

from knobs import frameworks, machine


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", required=True, choices=frameworks.WITH_GRAPH)
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--image", type=int, nargs=3, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    import numpy as np

    example = np.random.default_rng(0).random((args.batch, *args.image), dtype=np.float32)
    module = frameworks.load(args.framework)
    text = module.describe(example)
    info = machine.describe()
    header = (f"framework: {args.framework}\nbatch: {args.batch} x {args.image} float32, "
              f"{example.nbytes / 1e6:.1f} MB\nmachine: {info['cpu']}, {info['host']}\n"
              f"written: {datetime.datetime.now(datetime.timezone.utc).isoformat()}\n\n")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out + ".tmp", "w") as out:
        out.write(header + text)
    os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    main()
