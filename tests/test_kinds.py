"""A knob kind of the user's own (knobs/kinds/base.py): one module named by a config's `kinds:`
reaches the config's schema, the command line, the measured process and its proof, with no
other file touched; a kind that does not apply fails its run, and a bad kind file is named."""

import pandas as pd
import pytest

from conftest import load_yaml, write_config
from test_recovery import config_of, make_run

from knobs import kinds, results

MARKER_KIND = '''
from knobs.kinds.base import Effect, Kind, Knob, KnobNotApplied
import os


class Marker(Kind):
    """`marker: on` sets KNOBS_MARKER in the measured process; `marker: forgotten` forgets to,
    as a kind with a bug would."""
    key = "marker"
    option = "--marker"
    schema = {"type": "string", "enum": ["on", "forgotten"]}

    def launch(self, knobs, env):
        for knob in knobs:
            if knob.value == "on":
                env["KNOBS_MARKER"] = "on"

    def present(self, knob, environ, real_maps):
        if environ.get("KNOBS_MARKER") != knob.value:
            raise KnobNotApplied(f"KNOBS_MARKER is {environ.get('KNOBS_MARKER')!r}")
        return {"KNOBS_MARKER": environ["KNOBS_MARKER"]}

    def effect(self, knob):
        return Effect(lambda value: (os.environ.get("KNOBS_MARKER") == value,
                                     {"pid": os.getpid()}), started=True)
'''


def marked_config(tmp_path, kind_text=MARKER_KIND, **environments):
    (tmp_path / "marker.py").write_text(kind_text)
    config = load_yaml(config_of(tmp_path, reps=1))
    config["kinds"] = [str(tmp_path / "marker.py")]
    config["environments"] = environments
    config["benchmarks"]["tiny_sum"]["environments"] = ["glibc", *environments]
    return write_config(tmp_path, config)


def test_a_kind_of_the_users_own_is_launched_proven_and_failed_where_it_does_not_apply(tmp_path):
    config = marked_config(tmp_path, marked={"marker": "on"}, forgotten={"marker": "forgotten"})
    done = make_run(config)
    assert done.returncode == 1, done.stdout + done.stderr  # the forgotten knob: a failed run
    run = results.load(next((tmp_path / "results/runs/tiny_sum/marked").rglob("*.json.gz")))
    proof = run["knobs"]["proofs"]["marker"]
    assert proof["kind"] == "marker" and proof["value"] == "on" and proof["proof"] == "effect"
    assert proof["seen"]["KNOBS_MARKER"] == "on"
    missing = pd.read_csv(tmp_path / "results" / "tables" / "not_measured.csv")
    why = dict(zip(missing["run"], missing["reason"]))
    assert why == {"runs/tiny_sum/forgotten/cpu/rep0.json.gz":
                   "knob not applied: environment 'forgotten': KNOBS_MARKER is None"}


def test_a_value_the_users_kind_does_not_take_is_a_config_error(tmp_path):
    config = marked_config(tmp_path, marked={"marker": "of"})
    done = make_run(config)
    assert done.returncode != 0 and "marker" in done.stderr and "'of'" in done.stderr
    assert not (tmp_path / "results" / "runs").exists()


@pytest.mark.parametrize("text, said", [
    ("x = 1\n", "defines no knob kind"),
    (MARKER_KIND.replace('key = "marker"', 'key = "threads"'), "two knob kinds claim 'threads'"),
])
def test_a_kind_file_that_is_no_kind_or_takes_a_builtin_key_is_named(tmp_path, text, said):
    config = marked_config(tmp_path, kind_text=text)
    done = make_run(config)
    assert done.returncode != 0 and said in done.stderr and "marker.py" in done.stderr
    assert not (tmp_path / "results" / "runs").exists()


def test_the_builtin_kinds_keep_their_order_and_claim_distinct_keys_and_options():
    builtin = kinds.load()
    assert [k.key for k in builtin] == ["env", "preload", "aslr", "threads", "interop_threads",
                                        "precision"]
    assert len({k.option for k in builtin}) == len(builtin)
