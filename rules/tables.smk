rule table:
    input:
        unpack(table_inputs),
    output:
        report(
            f"{RESULTS}/tables/{{experiment}}.csv",
            caption="../report/table.rst",
            category="{experiment}",
            labels={"what": "tidy table"},
        ),
    log:
        f"{LOGS}/table/{{experiment}}.log",
    conda:
        "../envs/plots.yaml"
    params:
        settings=table_params,
        caption=table_caption,
    script:
        "scripts/table.py"


rule ops_table:
    input:
        ops_table_inputs,
    output:
        f"{RESULTS}/tables/{{experiment}}_ops.csv",
    log:
        f"{LOGS}/ops_table/{{experiment}}.log",
    conda:
        "../envs/plots.yaml"
    script:
        "scripts/ops_table.py"


rule summary_table:
    input:
        unpack(summary_inputs),
    output:
        summary=report(
            f"{RESULTS}/tables/summary.csv",
            caption="../report/summary.rst",
            category="Summary statistics",
            labels={"what": "summary"},
        ),
        system=report(
            f"{RESULTS}/tables/system.csv",
            caption="../report/system.rst",
            category="Setup",
            labels={"what": "system"},
        ),
    log:
        f"{LOGS}/summary_table.log",
    conda:
        "../envs/plots.yaml"
    params:
        experiments=summary_params(),
        statistics=config["statistics"],
    script:
        "scripts/summary.py"


rule verdicts_table:
    input:
        unpack(summary_inputs),
        summary=f"{RESULTS}/tables/summary.csv",
    output:
        report(
            f"{RESULTS}/tables/verdicts.csv",
            caption="../report/verdicts.rst",
            category="Summary statistics",
            labels={"what": "verdicts"},
        ),
    log:
        f"{LOGS}/verdicts_table.log",
    conda:
        "../envs/plots.yaml"
    params:
        experiments=summary_params(),
        comparisons=comparisons(),
        statistics=config["statistics"],
    script:
        "scripts/verdicts.py"


rule report_config:
    output:
        report(
            f"{RESULTS}/config_used.yaml",
            caption="../report/config.rst",
            category="Setup",
            labels={"what": "config"},
        ),
    log:
        f"{LOGS}/report_config.log",
    conda:
        "../envs/plots.yaml"
    params:
        config=config,
    script:
        "scripts/write_config.py"


rule not_measured_table:
    output:
        report(
            f"{RESULTS}/tables/not_measured.csv",
            caption="../report/not_measured.rst",
            category="Summary statistics",
            labels={"what": "not measured"},
        ),
    log:
        f"{LOGS}/not_measured_table.log",
    conda:
        "../envs/plots.yaml"
    params:
        not_measured=config["not_measured"],
    script:
        "scripts/not_measured.py"
