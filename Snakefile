from snakemake.utils import min_version

min_version("9.0")


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/benchmarks.smk"
include: "rules/tables.smk"
include: "rules/figures.smk"
include: "rules/search.smk"


# Cheap steps run where Snakemake runs, not through a cluster's queue (the tables, which can
# take minutes for a large result set, are submitted like the benchmarks).
localrules:
    all,
    figure,
    not_measured_table,
    report_config,
    search_answer,


rule all:
    default_target: True
    input:
        get_final_output(),
