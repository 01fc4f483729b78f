#!/usr/bin/env python3
"""Write what a framework compiled or ran for the identity function, one section per device:
its graph (debugprint, partition graphs) or its profiler's view. On the CPU the graph is one
deep copy and no host-device transfer op exists; on the GPU the transfers appear beside it.
"""

import argparse
import datetime
import os

from knobs import frameworks, machine


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", required=True, choices=frameworks.WITH_GRAPH)
    parser.add_argument("--devices", nargs="+", default=["cpu"], choices=["cpu", "gpu"])
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--image", type=int, nargs=3, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    import numpy as np

    example = np.random.default_rng(0).random((args.batch, *args.image), dtype=np.float32)
    module = frameworks.load(args.framework)
    sections = [f"device: {device}\n{'=' * (8 + len(device))}\n{module.describe(example, device)}"
                for device in args.devices if device in frameworks.devices(args.framework)]
    info = machine.describe()
    header = (f"framework: {args.framework}\nbatch: {args.batch} x {args.image} float32, "
              f"{example.nbytes / 1e6:.1f} MB\nmachine: {info['cpu']}, {info['host']}"
              f"{', ' + machine.gpu_text(info) if info['gpus'] else ''}\n"
              f"written: {datetime.datetime.now(datetime.timezone.utc).isoformat()}\n\n")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out + ".tmp", "w") as out:
        out.write(header + "\n\n".join(sections))
    os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    main()
