"""Where a benchmark's code runs: a runtime is an interpreter with its libraries, a virtual
environment (`make setup` builds them) or, with --use-conda, envs/<runtime>.yaml."""

# Legacy Theano needs the old numpy ABI: it has an environment of its own.
VENVS = {"theano": ".venv-theano"}
DEFAULT_VENV = ".venv"
# The runtimes whose library must see a GPU for a benchmark to run on one (knobs/gpu.py).
GPU_LIBRARIES = ("torch", "tensorflow")
