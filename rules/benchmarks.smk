# Every measurement is one process of scripts/run_benchmark.py, whatever the experiment: the
# command (knobs/experiments.py) names the benchmark, its params, the environment and device.
rule benchmark_run:
    input:
        run_module,
    output:
        experiments.run_file(RESULTS, "{experiment}", "{configuration}", "{rep}"),
    log:
        experiments.run_log_file(LOGS, "{experiment}", "{configuration}", "{rep}"),
    priority: run_priority
    conda:
        run_conda_env
    threads: run_threads
    resources:
        bench=1,
        gpu=run_gpus,
    params:
        command=run_command,
    shell:
        "{params.command} --out {output:q} > {log:q} 2>&1"


rule benchmark_evidence:
    output:
        f"{RESULTS}/evidence/{{experiment}}/{{name}}.txt",
    log:
        experiments.evidence_log_file(LOGS, "{experiment}", "{name}"),
    conda:
        evidence_conda_env
    resources:
        bench=1,
        gpu=evidence_gpus,
    params:
        command=evidence_command,
    shell:
        "{params.command} --out {output:q} > {log:q} 2>&1"
