"""numpy: `np.copy`, the reference every framework's copy is compared with."""

# What the copy step needs to know without importing it (read from this file).
FRAMEWORK = {"runtime": "numpy"}

import numpy as np

from knobs.benchmarks.copy.frameworks import Identity


def build(example, device="cpu"):
    return Identity(call=np.copy, prepare=lambda x: x, to_numpy=lambda y: y,
                    version=np.__version__, evidence={"op": "numpy.copy"})
