"""The --use-conda path, checked statically (conda cannot be reached here): every rule names
an env file that exists, parses, pins each package with `=`, and holds what its code imports."""

import re

import pytest

from conftest import REPO, load_yaml
from knobs.benchmarks.copy import frameworks

# What each env's code imports, as conda-forge package names.
IMPORTS = {
    "numpy": ["numpy"],
    "torch": ["pytorch", "numpy"],
    "tensorflow": ["tensorflow", "numpy"],
    "pytensor": ["pytensor", "numba", "jax", "jaxlib", "numpy", "cxx-compiler"],
    "theano": ["theano", "numpy", "scipy", "cxx-compiler"],
    "plots": ["pandas", "seaborn", "matplotlib-base", "jsonschema", "pyyaml"],
}
PRELOADED = ["gperftools", "jemalloc"]  # so the environments' preloads resolve inside the env


def rules_and_conda():
    for smk in sorted((REPO / "rules").glob("*.smk")):
        for block in re.split(r"^rule ", smk.read_text(), flags=re.M)[1:]:
            name = block.split(":", 1)[0]
            match = re.search(r"^    conda:\n        (.+)$", block, flags=re.M)
            yield name, match.group(1).strip() if match else None


def test_every_rule_that_runs_code_names_a_conda_env():
    for name, conda in rules_and_conda():
        if name != "all":
            assert conda, f"rule {name} has no conda: directive"


@pytest.mark.parametrize("runtime", sorted(IMPORTS))
def test_env_file_pins_what_its_code_imports(runtime):
    env = load_yaml(REPO / "envs" / f"{runtime}.yaml")
    assert env["channels"] == ["conda-forge", "nodefaults"]
    pins = {}
    for dependency in env["dependencies"]:
        name, _, version = dependency.partition("=")
        assert version.strip(), f"{runtime}: {dependency} is not pinned with ="
        pins[name.strip()] = version.strip()
    assert "python" in pins
    for package in IMPORTS[runtime]:
        assert package in pins, f"envs/{runtime}.yaml lacks {package}"
    if runtime != "plots":
        for package in PRELOADED:
            assert package in pins, f"envs/{runtime}.yaml lacks {package}"


def test_every_framework_runtime_has_an_env_file():
    for framework, spec in frameworks.FRAMEWORKS.items():
        assert (REPO / "envs" / f"{spec.runtime}.yaml").is_file(), framework
    schema = load_yaml(REPO / "config" / "schema.yaml")
    runtimes = schema["properties"]["benchmarks"]["additionalProperties"]["properties"]["runtime"]
    for runtime in runtimes["enum"]:  # what a user's benchmark may run in
        assert (REPO / "envs" / f"{runtime}.yaml").is_file(), runtime
