from snakemake.utils import min_version

min_version("9.0")


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/benchmarks.smk"
include: "rules/tables.smk"
include: "rules/figures.smk"


rule all:
    default_target: True
    input:
        get_final_output(),
