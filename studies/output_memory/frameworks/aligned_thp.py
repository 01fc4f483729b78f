"""numpy's copy into memory aligned to 2 MiB, as PyTorch asks for it under
THP_MEM_ALLOC_ENABLE=1 (the `torch_thp` environment); see aligned.py."""

# What the copy step needs to know without importing it (read from this file).
FRAMEWORK = {"runtime": "numpy"}

from studies.output_memory.frameworks import aligned

ALIGNMENT = 2 << 20  # one transparent huge page: what PyTorch asks for under THP_MEM_ALLOC_ENABLE


def build(example, device="cpu"):
    return aligned.build(example, device, ALIGNMENT)
