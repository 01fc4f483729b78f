"""numpy's copy into 64-byte-aligned memory (aligned.py) with the one request PyTorch's clone
makes between its outputs: 96 bytes from `malloc` just before the output's `posix_memalign`,
freed just after the output (the allocation record: studies/output_memory/allocations.py). Beside `aligned`,
it shows whether that request alone moves where glibc puts the outputs."""

# What the copy step needs to know without importing it (read from this file).
FRAMEWORK = {"runtime": "numpy"}

from studies.output_memory.frameworks import aligned

ALIGNMENT = aligned.ALIGNMENT
COMPANION = 96  # bytes: what PyTorch asks glibc for before each output (results/paper/allocations)


def build(example, device="cpu"):
    return aligned.build(example, device, ALIGNMENT, COMPANION)
