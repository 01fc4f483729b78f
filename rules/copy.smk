rule copy_run:
    output:
        copy_run_outputs(),
    log:
        "logs/copy_run/{framework}/{environment}/{device}/{input}/rep{rep}.log",
    conda:
        runtime_conda_env
    threads: COPY.get("threads", 1)
    resources:
        bench=1,
        gpu=lambda wildcards: int(wildcards.device == "gpu"),
    params:
        python=runtime_python,
        launcher=environment_launcher,
        script=SCRIPTS / "copy_run.py",
        args=copy_run_args,
    shell:
        "{params.python} {params.launcher} {params.python} {params.script} {params.args}"
        " --out {output:q} > {log:q} 2>&1"


rule copy_evidence:
    output:
        f"{RESULTS}/evidence/copy/{{framework}}.txt",
    log:
        "logs/copy_evidence/{framework}.log",
    conda:
        runtime_conda_env
    resources:
        bench=1,
        gpu=lambda wildcards: int("gpu" in copy_evidence_devices(wildcards)),
    params:
        python=runtime_python,
        script=SCRIPTS / "copy_evidence.py",
        args=copy_evidence_args,
    shell:
        "{params.python} {params.script} {params.args} --out {output:q} > {log:q} 2>&1"


rule copy_table:
    input:
        copy_run_files(),
    output:
        report(
            f"{RESULTS}/tables/copy.csv",
            caption="../report/copy_table.rst",
            category="Copy step",
            labels={"what": "tidy table"},
        ),
    log:
        "logs/copy_table.log",
    conda:
        "../envs/plots.yaml"
    params:
        limit=COPY.get("limit"),
    script:
        "../scripts/copy_table.py"
