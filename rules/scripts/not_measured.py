"""The processes a result set lacks, each with why (a Snakemake script; its config's
`not_measured`, written by scripts/run.py where a run's processes failed)."""

import sys

import pandas as pd

sys.stderr = open(snakemake.log[0], "w", buffering=1)

listed = snakemake.params.not_measured
reasons = listed if isinstance(listed, dict) else dict.fromkeys(listed, "")
pd.DataFrame({"run": list(reasons), "experiment": [r.split("/")[1] for r in reasons],
              "reason": list(reasons.values())}).to_csv(snakemake.output[0], index=False)
