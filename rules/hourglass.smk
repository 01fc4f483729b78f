rule hourglass_run:
    output:
        run=HOURGLASS_RUN,
        trace=HOURGLASS_TRACE,
    log:
        "logs/hourglass_run/{framework}/{variant}/{environment}/{device}/rep{rep}.log",
    conda:
        runtime_conda_env
    resources:
        bench=1,
        gpu=lambda wildcards: int(wildcards.device == "gpu"),
    params:
        python=runtime_python,
        launcher=environment_launcher,
        script=SCRIPTS / "hourglass_run.py",
        args=hourglass_run_args,
    shell:
        "{params.python} {params.launcher} {params.python} {params.script} {params.args}"
        " --trace {output.trace:q} --out {output.run:q} > {log:q} 2>&1"


rule hourglass_peak:
    output:
        HOURGLASS_PEAK,
    log:
        "logs/hourglass_peak/{device}/rep{rep}.log",
    conda:
        "../envs/torch.yaml"
    resources:
        bench=1,
        gpu=lambda wildcards: int(wildcards.device == "gpu"),
    params:
        python=lambda wildcards: runtime_python(wildcards, "torch"),
        launcher=lambda wildcards: environment_launcher(wildcards, "glibc"),
        script=SCRIPTS / "matmul_peak.py",
        args=peak_args,
    shell:
        "{params.python} {params.launcher} {params.python} {params.script} {params.args}"
        " --out {output:q} > {log:q} 2>&1"


rule hourglass_table:
    input:
        runs=hourglass_run_files(),
        peaks=hourglass_peak_files(),
    output:
        steps=report(
            f"{RESULTS}/tables/hourglass.csv",
            caption="../report/hourglass_table.rst",
            category="Hourglass",
            labels={"what": "tidy table"},
        ),
        ops=f"{RESULTS}/tables/hourglass_ops.csv",
    log:
        "logs/hourglass_table.log",
    conda:
        "../envs/plots.yaml"
    params:
        plan=HOURGLASS_PLAN,
        devices=HOURGLASS.get("devices"),
    script:
        "../scripts/hourglass_table.py"
