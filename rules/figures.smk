rule figures_copy:
    input:
        "results/tables/copy.csv",
    output:
        png=report(
            "results/figures/copy_step.png",
            caption="../report/copy_step.rst",
            category="Copy step",
            labels={"what": "figure"},
        ),
        svg="results/figures/copy_step.svg",
    log:
        "logs/figures_copy.log",
    conda:
        "../envs/plots.yaml"
    script:
        "../scripts/copy_figure.py"


rule figures_hourglass:
    input:
        steps="results/tables/hourglass.csv",
        ops="results/tables/hourglass_ops.csv",
    output:
        ladder_png=report(
            "results/figures/hourglass_ladder.png",
            caption="../report/hourglass_ladder.rst",
            category="Hourglass",
            labels={"what": "ablation ladder"},
        ),
        ladder_svg="results/figures/hourglass_ladder.svg",
        ops_png=report(
            "results/figures/hourglass_ops.png",
            caption="../report/hourglass_ops.rst",
            category="Hourglass",
            labels={"what": "op categories"},
        ),
        ops_svg="results/figures/hourglass_ops.svg",
    log:
        "logs/figures_hourglass.log",
    conda:
        "../envs/plots.yaml"
    script:
        "../scripts/hourglass_figure.py"
