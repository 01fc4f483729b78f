# A search's answer (scripts/search.py names the benchmark in `search_of` once it has one):
# its path drawn from the ranked table, with the table and the recipe in the caption.
rule search_answer:
    input:
        ranked=f"{RESULTS}/search.csv",
        recipe=f"{RESULTS}/recipe.txt",
    output:
        report(
            f"{RESULTS}/search.png",
            caption="../report/search.rst",
            category="Which knobs help",
            labels={"what": "the search"},
        ),
    log:
        f"{LOGS}/search_answer.log",
    conda:
        "../envs/plots.yaml"
    params:
        baseline=search_baseline,
        threshold=config["statistics"]["threshold"],
        caption=search_caption,
    script:
        "scripts/search_answer.py"
