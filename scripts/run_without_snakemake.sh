#!/usr/bin/env bash
# Run the GPU jobs of config/paper.yaml on a GPU node that has PyTorch (and perhaps JAX,
# TensorFlow, PyTensor) but no Snakemake: see scripts/run_without_snakemake.py --help. Needs
# PyYAML and numpy beside the frameworks. Then, where Snakemake runs: make paper.
#   scripts/run_without_snakemake.sh                    the GPU jobs of config/paper.yaml
#   scripts/run_without_snakemake.sh --dry-run          what would run, what is skipped and why
#   scripts/run_without_snakemake.sh --devices cpu gpu  the CPU copies too, on the same machine
# Relative paths (results, --configfile) are read from the current folder, as Snakemake's are.
set -euo pipefail
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-python3}
export PYTHONPATH="$SCRIPTS${PYTHONPATH:+:$PYTHONPATH}"
exec "$PYTHON" "$SCRIPTS/run_without_snakemake.py" "$@"
