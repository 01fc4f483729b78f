# Set up everything the workflow needs, then run it or test it.
#   make run    the default experiment (config/config.yaml), then results/report.html
#   make test   the test suite
# Running either a second time installs nothing and reruns nothing.

PYTHON ?= python3.11
VENV := .venv
SNAKEMAKE := $(VENV)/bin/snakemake

.PHONY: setup run test test-slurm report lint rerun resolve paper compare replicate

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

run: setup
	$(SNAKEMAKE) --cores 1
	$(MAKE) --no-print-directory results/report.html

results/report.html: $(wildcard results/tables/*.csv results/figures/*.png results/evidence/*/*.txt)
	$(SNAKEMAKE) --cores 1 --report $@

report: setup
	$(SNAKEMAKE) --cores 1 --report results/report.html

# Rerun one configuration and what is built from it, e.g. make rerun RUN=copy/theano/tcmalloc
rerun: setup
	@test -n "$(RUN)" || { echo "usage: make rerun RUN=<experiment>/<configuration path>, e.g. copy/theano/tcmalloc"; exit 2; }
	@test -d results/runs/$(RUN) || { echo "no results/runs/$(RUN): run it first (make run)"; exit 2; }
	$(SNAKEMAKE) --cores 1 --forcerun $$(find results/runs/$(RUN) -name '*.json' | sort)
	$(MAKE) --no-print-directory results/report.html

# More processes where the run's verdicts are inconclusive (scripts/resolve.py), at most MOST
# per configuration, e.g. make resolve MOST=12 (CONFIG: the config the run was made with;
# MINUTES: the most minutes of measuring, cheapest verdicts first). The tables are forced:
# where Snakemake has no record of how they were made (a copied or cloned set), their
# missing runs alone would not make it rebuild them.
MOST ?= 12
CONFIG ?= config/config.yaml
resolve: setup
	@test -f results/tables/verdicts.csv || { echo "no results/tables/verdicts.csv: run it first (make run)"; exit 2; }
	$(VENV)/bin/python scripts/resolve.py results --most $(MOST) $(if $(MINUTES),--minutes $(MINUTES)) > results/more_reps.yaml
	$(SNAKEMAKE) --cores 1 --forcerun table --configfile $(CONFIG) results/more_reps.yaml
	$(MAKE) --no-print-directory results/report.html

# Rebuild every figure, table and the report of each shipped result set (results/paper: the
# CPU reference run; results/paper/gpu: what scripts/gpu_paper.sh measured on a GPU node;
# results/paper/gpu/second: the same config in a second GPU session)
# from its run files and its config.yaml: no benchmark runs (only these rules may), no
# framework is imported.
PAPER_SETS := $(patsubst %/config.yaml,%,$(wildcard results/paper/config.yaml results/paper/*/config.yaml \
	results/paper/*/*/config.yaml results/paper/*/*/*/config.yaml))
PAPER_RULES := table ops_table summary_table verdicts_table report_config figures_copy figures_hourglass \
	figures_benchmark all
paper: setup
	@for set in $(PAPER_SETS); do \
	  echo "== $$set"; \
	  $(VENV)/bin/python scripts/convert_results.py --check $$set && \
	  $(SNAKEMAKE) --cores 1 --configfile $$set/config.yaml --allowed-rules $(PAPER_RULES) && \
	  $(SNAKEMAKE) --cores 1 --configfile $$set/config.yaml --report $$set/report.html || exit 1; \
	done

# Run a config twice, back to back, into INTO and INTO/second, with both runs' times and
# their comparison (scripts/replicate.py), e.g. a shipped study on your machine:
# make replicate CONFIG=config/own_store_path.yaml INTO=results/paper/own_store_path/mine
replicate: setup
	@test -n "$(INTO)" || { echo "usage: make replicate CONFIG=config/<study>.yaml INTO=<new result set>"; exit 2; }
	$(VENV)/bin/python scripts/replicate.py $(CONFIG) $(INTO)

# Compare two result sets, e.g. make compare A=results/paper B=results
compare: setup
	@test -n "$(A)" -a -n "$(B)" || { echo "usage: make compare A=<result set> B=<result set>"; exit 2; }
	$(VENV)/bin/python scripts/compare.py $(A) $(B) --out results/comparison

lint: setup
	$(VENV)/bin/snakefmt --check .
	$(SNAKEMAKE) --lint

test: setup
	$(VENV)/bin/pytest -q tests --ignore=tests/slurm

# The Slurm test: starts a single-node Slurm here (root, Debian's slurm-wlm and munge).
test-slurm: setup .slurm-ready
	$(VENV)/bin/pytest -q tests/slurm

.slurm-ready: scripts/setup_system.sh
	bash scripts/setup_system.sh slurm-wlm munge
	touch $@
