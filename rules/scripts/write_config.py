"""Write the config this run used, defaults filled in, for the report (a Snakemake script)."""

import yaml

with open(snakemake.output[0], "w") as out:
    yaml.safe_dump(snakemake.params.config, out, sort_keys=False)
