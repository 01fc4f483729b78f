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
