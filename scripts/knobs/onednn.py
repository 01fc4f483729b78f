"""What oneDNN ran, read from its own verbose lines: each compute primitive's implementation
(which names the instruction set: `brg_conv_fwd:avx10_1_512_amx`) and its data types. The
proof of the bfloat16 and instruction-set knobs: oneDNN is what PyTorch and TensorFlow run
their CPU convolutions and matrix products with.

PyTorch switches the lines on for one extra step after the timed ones (its own API), so the
timed steps print nothing; TensorFlow reads ONEDNN_VERBOSE once at start, so its processes print
what each primitive's creation was (`profile_create`: the warm-up, then nothing, as TensorFlow
keeps its primitives). Either way the lines go to the process's standard output, which
`Capture` holds for the whole process and gives back without them.
"""

import os
import re
import sys
import tempfile

COMPUTE = ("convolution", "matmul", "inner_product", "deconvolution", "rnn")
# oneDNN's instruction sets, lowest first; `avx10_1_512` is its newer name for
# avx512_core_fp16 (and `_amx` on either the same AMX tier).
ISAS = ("sse41", "avx", "avx2", "avx2_vnni", "avx2_vnni_2", "avx512_core", "avx512_core_vnni",
        "avx512_core_bf16", "avx512_core_fp16", "avx512_core_amx", "avx512_core_amx_fp16")
ALIASES = {"avx10_1_512": "avx512_core_fp16", "avx10_1_512_amx": "avx512_core_amx",
           "avx10_1_512_amx_fp16": "avx512_core_amx_fp16", "avx512_core_bf16_amx_bf16":
           "avx512_core_amx", "avx512_core_amx_bf16": "avx512_core_amx"}
PRIMITIVE = re.compile(r"^onednn_verbose,(?:v1,)?(?:[\d.]+,)?primitive,(exec|create:[a-z_]+),"
                       r"cpu,([a-z_]+),([^,]*),[^,]*,([^,]*)")


def rank(isa):
    """An instruction set's place in ISAS (a knob's cap: its upper-case name), None if unknown."""
    name = ALIASES.get(isa.lower(), isa.lower())
    return ISAS.index(name) if name in ISAS else None


def parse(text):
    """{"isa_line": oneDNN's own line naming the CPU's best set, "compute": [(primitive,
    implementation's instruction set or None, source data type)]} of the verbose lines in
    `text`."""
    isa_line, compute = None, []
    for line in text.splitlines():
        if line.startswith("onednn_verbose") and ",info,cpu,isa:" in line:
            isa_line = line.split("isa:", 1)[1]
        match = PRIMITIVE.match(line)
        if match and match.group(2) in COMPUTE:
            implementation, descriptors = match.group(3), match.group(4)
            isa = implementation.rsplit(":", 1)[1] if ":" in implementation else None
            source = re.search(r"src:([a-z0-9]+)", descriptors)
            compute.append((match.group(2), isa if isa and rank(isa) is not None else None,
                            source.group(1) if source else None))
    return {"isa_line": isa_line, "compute": compute}


class Capture:
    """Hold the process's standard output (file descriptor 1, what C libraries write to) in a
    file from `start` to `stop`; `stop` writes back the lines that are not oneDNN's and returns
    them all."""

    def start(self):
        sys.stdout.flush()
        self.saved = os.dup(1)
        self.file = tempfile.TemporaryFile(mode="w+b")
        os.dup2(self.file.fileno(), 1)
        return self

    def stop(self):
        sys.stdout.flush()
        os.dup2(self.saved, 1)
        os.close(self.saved)
        self.file.seek(0)
        text = self.file.read().decode(errors="replace")
        self.file.close()
        kept = "".join(line for line in text.splitlines(keepends=True)
                       if not line.startswith("onednn_verbose"))
        sys.stdout.write(kept)
        sys.stdout.flush()
        return text

