# Every figure of every experiment: its benchmark's own (`draw`, named in Experiment.figures)
# or, for a section under `benchmarks:`, the generic one; the caption comes with it.
rule figure:
    input:
        unpack(figure_inputs),
    output:
        png=report(
            f"{RESULTS}/figures/{{figure}}.png",
            caption="../report/figure.rst",
            category=figure_category,
            labels={"what": "figure {figure}"},
        ),
        svg=f"{RESULTS}/figures/{{figure}}.svg",
    log:
        f"{LOGS}/figure/{{figure}}.log",
    conda:
        "../envs/plots.yaml"
    params:
        figure=figure_params,
        caption=figure_caption,
    script:
        "scripts/figure.py"
