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
        "logs/summary_table.log",
    conda:
        "../envs/plots.yaml"
    params:
        baselines=summary_baselines(),
        statistics=config["statistics"],
    script:
        "../scripts/summary.py"


rule report_config:
    output:
        report(
            f"{RESULTS}/config_used.yaml",
            caption="../report/config.rst",
            category="Setup",
            labels={"what": "config"},
        ),
    log:
        "logs/report_config.log",
    conda:
        "../envs/plots.yaml"
    params:
        config=config,
    script:
        "../scripts/write_config.py"
