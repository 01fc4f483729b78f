rule figures_copy:
    input:
        table=f"{RESULTS}/tables/copy.csv",
        summary=f"{RESULTS}/tables/summary.csv",
    output:
        png=report(
            f"{RESULTS}/figures/copy_step.png",
            caption="../report/copy_step.rst",
            category="copy",
            labels={"what": "figure"},
        ),
        svg=f"{RESULTS}/figures/copy_step.svg",
        model_png=report(
            f"{RESULTS}/figures/copy_model.png",
            caption="../report/copy_model.rst",
            category="copy",
            labels={"what": "fault model"},
        ),
        model_svg=f"{RESULTS}/figures/copy_model.svg",
    log:
        f"{LOGS}/figures_copy.log",
    conda:
        "../envs/plots.yaml"
    script:
        "../scripts/copy_figure.py"


rule figures_hourglass:
    input:
        steps=f"{RESULTS}/tables/hourglass.csv",
        ops=f"{RESULTS}/tables/hourglass_ops.csv",
        summary=f"{RESULTS}/tables/summary.csv",
    output:
        ladder_png=report(
            f"{RESULTS}/figures/hourglass_ladder.png",
            caption="../report/hourglass_ladder.rst",
            category="hourglass",
            labels={"what": "ablation ladder"},
        ),
        ladder_svg=f"{RESULTS}/figures/hourglass_ladder.svg",
        ops_png=report(
            f"{RESULTS}/figures/hourglass_ops.png",
            caption="../report/hourglass_ops.rst",
            category="hourglass",
            labels={"what": "op categories"},
        ),
        ops_svg=f"{RESULTS}/figures/hourglass_ops.svg",
        why_png=report(
            f"{RESULTS}/figures/hourglass_why.png",
            caption="../report/hourglass_why.rst",
            category="hourglass",
            labels={"what": "why"},
        ),
        why_svg=f"{RESULTS}/figures/hourglass_why.svg",
        gap_png=report(
            f"{RESULTS}/figures/hourglass_gap.png",
            caption="../report/hourglass_gap.rst",
            category="hourglass",
            labels={"what": "where the gap lives"},
        ),
        gap_svg=f"{RESULTS}/figures/hourglass_gap.svg",
    log:
        f"{LOGS}/figures_hourglass.log",
    conda:
        "../envs/plots.yaml"
    script:
        "../scripts/hourglass_figure.py"


rule figures_benchmark:
    input:
        table=f"{RESULTS}/tables/{{user_experiment}}.csv",
        summary=f"{RESULTS}/tables/summary.csv",
    output:
        png=report(
            f"{RESULTS}/figures/{{user_experiment}}.png",
            caption="../report/benchmark.rst",
            category="{user_experiment}",
            labels={"what": "figure"},
        ),
        svg=f"{RESULTS}/figures/{{user_experiment}}.svg",
    log:
        f"{LOGS}/figures_benchmark/{{user_experiment}}.log",
    conda:
        "../envs/plots.yaml"
    params:
        labels=lambda wildcards: summary_params()[wildcards.user_experiment]["labels"],
    script:
        "../scripts/benchmark_figure.py"
