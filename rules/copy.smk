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
    params:
        python=runtime_python,
        launcher=environment_launcher,
        script=SCRIPTS / "copy_run.py",
        batches=COPY.get("batches"),
        image=COPY.get("image"),
        warmup=COPY.get("warmup"),
        calls=COPY.get("calls"),
        order=COPY.get("order"),
    shell:
        "{params.python} {params.launcher}"
        " {params.python} {params.script}"
        " --framework {wildcards.framework} --environment {wildcards.environment}"
        " --device {wildcards.device} --input {wildcards.input} --rep {wildcards.rep}"
        " --batches {params.batches} --image {params.image} --threads {threads}"
        " --warmup {params.warmup} --calls {params.calls} --order {params.order}"
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
    params:
        python=runtime_python,
        script=SCRIPTS / "copy_evidence.py",
        batch=max(COPY.get("batches", [1])),
        image=COPY.get("image"),
    shell:
        "{params.python} {params.script} --framework {wildcards.framework}"
        " --batch {params.batch} --image {params.image} --out {output:q} > {log:q} 2>&1"


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
