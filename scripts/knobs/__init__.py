"""Shared pieces of the knobs benchmarks.

Everything here must import with only the standard library (and numpy where it says so): the
same modules run in the main environment, in the legacy Theano environment (Python 3.11,
numpy 1.23) and inside Snakemake's own process.
"""
