"""How many rounds of processes fit a run's time budget (`budget:` in a config), on whatever
machine it runs: the budget's `fewest_rounds` are measured first, as the calibration; the
last one's process times say what each later round costs (a round past an experiment's
`reps` holds none of its configurations), and as many more are run as fit, never more than
the most `reps`.
"""

import datetime
from collections import defaultdict
from pathlib import Path

import yaml

from knobs import experiments, results

ROUNDS_FILE = "rounds.yaml"  # in the result set: the rounds chosen, with the budget they fit


def process_seconds(config, results_dir, rounds):
    """[{experiment: seconds its processes of round k took, start to finish}, for k < rounds],
    from their result files (a process that left none counts nothing)."""
    spent = [defaultdict(float) for _ in range(rounds)]
    for job in experiments.jobs(config):
        path = job.run(results_dir)
        if job.rep < rounds and Path(path).exists():
            run = results.read(path, validate=False)
            started = datetime.datetime.fromisoformat(run["process"]["started"])
            finished = datetime.datetime.fromisoformat(run["finished"])
            spent[job.rep][job.configuration.experiment] += (finished - started).total_seconds()
    return [dict(by_experiment) for by_experiment in spent]


def rounds_that_fit(measured_seconds, spent, reps, minutes):
    """(rounds, predicted seconds of measuring): the most rounds whose predicted time fits in
    `minutes`, never fewer than the rounds measured. `measured_seconds`: the rounds measured
    so far by the clock (Snakemake's own time in it); `spent`: per round measured, {experiment:
    its processes' seconds}; `reps`: {experiment: its most rounds}. A later round costs what
    the last one measured did (the first pays for caches warming), each experiment's share
    scaled by the clock's time over the processes' own."""
    own = sum(seconds for by_experiment in spent for seconds in by_experiment.values())
    # rounds measured before (nothing to time now) cost what their processes took
    total = max(measured_seconds, own)
    share = total / (own or 1)
    cost = {name: seconds * share for name, seconds in spent[-1].items()}
    rounds = len(spent)
    while rounds < max(reps.values()):
        more = sum(cost.get(name, 0) for name, most in reps.items() if most > rounds)
        if total + more > minutes * 60:
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
