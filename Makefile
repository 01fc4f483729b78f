# Set up everything the workflow needs, then run it or test it.
#   make run [CONFIG=my.yaml]   run a config (default config/config.yaml), then its report.html
#   make test                   the test suite; make test-docs: what the README and studies say
# Running either a second time installs nothing and remeasures nothing.

PYTHON ?= python3.11
VENV := .venv
SNAKEMAKE := $(VENV)/bin/snakemake

CONFIG ?= config/config.yaml
# Where the config writes its results (its `results:`), read once setup has made the venv.
RESULTS = $(shell $(VENV)/bin/python -c 'import sys, yaml; print((yaml.safe_load(open(sys.argv[1])) or {}).get("results", "results"))' $(CONFIG))

.PHONY: setup run test test-docs test-slurm report lint rerun resolve paper compare replicate search

setup: $(VENV)/.installed .venv-theano/.installed .system-ready

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

.venv-theano/.installed: requirements-theano.txt
	$(PYTHON) -m venv .venv-theano
	.venv-theano/bin/pip install --quiet --disable-pip-version-check -r requirements-theano.txt
	touch $@

# Allocator libraries and the C++ compiler Theano and PyTensor compile with.
.system-ready: scripts/setup_system.sh
	bash scripts/setup_system.sh
	touch $@

# Interrupted or damaged, the same command recovers (scripts/run.py): nothing measured twice.
run: setup
	$(VENV)/bin/python scripts/run.py $(CONFIG)

report: setup
	$(VENV)/bin/python scripts/run.py $(CONFIG) --report-only

# Rerun one configuration and what is built from it, e.g. make rerun RUN=copy/theano/tcmalloc
rerun: setup
	@test -n "$(RUN)" || { echo "usage: make rerun RUN=<experiment>/<configuration path>, e.g. copy/theano/tcmalloc"; exit 2; }
	@test -d $(RESULTS)/runs/$(RUN) || { echo "no $(RESULTS)/runs/$(RUN): run it first (make run)"; exit 2; }
	$(VENV)/bin/python scripts/run.py $(CONFIG) -- --forcerun $$(find $(RESULTS)/runs/$(RUN) -name 'rep*.json.gz' | sort)

# More processes where the run's verdicts are inconclusive (scripts/resolve.py), at most MOST
# per configuration, e.g. make resolve MOST=12 (CONFIG: the config the run was made with;
# MINUTES: the most minutes of measuring, cheapest verdicts first). The tables are forced:
# where Snakemake has no record of how they were made (a copied or cloned set), their
# missing runs alone would not make it rebuild them.
MOST ?= 12
resolve: setup
	@test -f $(RESULTS)/tables/verdicts.csv || { echo "no $(RESULTS)/tables/verdicts.csv: run it first (make run)"; exit 2; }
	$(VENV)/bin/python scripts/resolve.py $(RESULTS) --most $(MOST) $(if $(MINUTES),--minutes $(MINUTES)) > $(RESULTS)/more_reps.yaml
	$(VENV)/bin/python scripts/run.py $(CONFIG) $(RESULTS)/more_reps.yaml -- --forcerun table

# Rebuild the figures, tables and report of shipped result sets from their run files and their
# config.yaml (scripts/paper.py): no benchmark runs, no framework is imported. Without STUDY:
# the reference run (results/paper) and the GPU run (results/paper/gpu and its second session);
# STUDY=<name>: the sets studies/<name>/study.yaml lists; STUDY=all: every set.
paper: setup
	$(VENV)/bin/python scripts/paper.py $(if $(STUDY),--study $(STUDY))

# Which knobs make a benchmark faster here, and the line to set them (scripts/search.py):
# each knob alone, then the ones that helped combined, within MINUTES of measuring, e.g.
# make search BENCH=my_model CONFIG=my_model.yaml MINUTES=30 (or BENCH=<a module>, no CONFIG)
search: setup
	@test -n "$(BENCH)" || { echo "usage: make search BENCH=<benchmark of CONFIG, or a module> [CONFIG=<config>] [MINUTES=<n>]"; exit 2; }
	$(VENV)/bin/python scripts/search.py $(BENCH) $(if $(filter command line,$(origin CONFIG)),--config $(CONFIG)) $(if $(MINUTES),--minutes $(MINUTES))

# Run a config twice, back to back, into INTO and INTO/second, with both runs' times and
# their comparison (scripts/replicate.py), e.g. a shipped study on your machine:
# make replicate CONFIG=studies/store_path/config/own_store_path.yaml INTO=results/paper/own_store_path/mine
replicate: setup
	@test -n "$(INTO)" || { echo "usage: make replicate CONFIG=<a config> INTO=<new result set>"; exit 2; }
	$(VENV)/bin/python scripts/replicate.py $(CONFIG) $(INTO)

# Compare two result sets, e.g. make compare A=results/paper B=results
compare: setup
	@test -n "$(A)" -a -n "$(B)" || { echo "usage: make compare A=<result set> B=<result set>"; exit 2; }
	$(VENV)/bin/python scripts/compare.py $(A) $(B) --out results/comparison

lint: setup
	$(VENV)/bin/snakefmt --check .
	$(SNAKEMAKE) --lint

test: setup
	$(VENV)/bin/pytest -q tests --ignore=tests/slurm --ignore=tests/docs --ignore=tests/studies

# What the README and the studies say: the README's examples run as written, every shipped
# set rebuilds from its runs (tables alone, byte for byte), every generated number is what
# the tables say, and the studies' own modules work.
test-docs: setup
	$(VENV)/bin/pytest -q tests/docs tests/studies

# The Slurm test: starts a single-node Slurm here (root, Debian's slurm-wlm and munge).
test-slurm: setup .slurm-ready
	$(VENV)/bin/pytest -q tests/slurm

.slurm-ready: scripts/setup_system.sh
	bash scripts/setup_system.sh slurm-wlm munge
	touch $@
