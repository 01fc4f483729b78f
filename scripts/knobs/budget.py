"""How many rounds of processes fit a run's time budget (`budget:` in a config), on whatever
machine it runs: round one, every configuration once, is the calibration; its processes'
times say what each later round costs (a round past an experiment's `reps` holds none of its
configurations), and as many rounds are run as fit, never fewer than the budget's
`fewest_rounds`, never more than the most `reps`.
"""

import datetime
from collections import defaultdict
from pathlib import Path

import yaml

from knobs import experiments, results

ROUNDS_FILE = "rounds.yaml"  # in the result set: the rounds chosen, with the budget they fit


def process_seconds(config, results_dir):
    """{experiment: seconds its round-one processes took, start to finish}, from their result
    files (a process that left none counts nothing)."""
    spent = defaultdict(float)
    for job in experiments.jobs(config):
        path = job.run(results_dir)
        if job.rep == 0 and Path(path).exists():
            run = results.read(path, validate=False)
            started = datetime.datetime.fromisoformat(run["process"]["started"])
            finished = datetime.datetime.fromisoformat(run["finished"])
            spent[job.configuration.experiment] += (finished - started).total_seconds()
    return dict(spent)


def rounds_that_fit(first_round_seconds, spent, reps, minutes, fewest):
    """(rounds, predicted seconds of measuring): the most rounds whose predicted time fits in
    `minutes`, at least `fewest`. `first_round_seconds`: round one by the clock (Snakemake's
    own time included); `spent`: {experiment: its processes' seconds in round one}, which
    shares that time out; `reps`: {experiment: its most rounds}."""
    # a round one measured before (nothing to time now) costs what its processes took
    total = max(first_round_seconds, sum(spent.values()))
    share = total / (sum(spent.values()) or 1)
    cost = {name: seconds * share for name, seconds in spent.items()}
    most = max(reps.values())
    rounds = 1
    while rounds < most:
        more = sum(seconds for name, seconds in cost.items() if reps[name] > rounds)
        if rounds >= fewest and total + more > minutes * 60:
            break
        rounds, total = rounds + 1, total + more
    return rounds, total


def decided(results_dir, budget):
    """The rounds a run under `budget` chose already for this set, or None."""
    path = Path(results_dir, ROUNDS_FILE)
    if not path.exists():
        return None
    chosen = yaml.safe_load(path.read_text()) or {}
    return chosen.get("rounds") if chosen.get("budget") == budget else None


def record(results_dir, budget, rounds, said):
    """Write the rounds chosen (a config overlay: `rounds`, and the budget it was chosen
    under), with how they were chosen as its first line; returns its path."""
    path = Path(results_dir, ROUNDS_FILE)
    path.write_text(f"# {said}\n" + yaml.safe_dump({"budget": budget, "rounds": rounds}))
    return path


def reps_of(config):
    """{experiment: its most processes per configuration}, as the config asks (no cap)."""
    uncapped = {**config, "rounds": None, "more_reps": {}}
    return {name: max(c.reps for c in x.configurations)
            for name, x in experiments.experiments(uncapped).items()}
