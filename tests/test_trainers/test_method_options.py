"""Each method declares its options once, in a torch-free `options.py` whose every field carries its help
(`setting(default, "help")`); the method reads that class through the base `Method.options_of`."""

import dataclasses
import subprocess
import sys

import pytest
from helpers import REPO, own_names

from harness import HarnessError
from trainers.config import load_config
from trainers.methods import METHODS

WITH_OPTIONS = [name for name in METHODS if METHODS[name].options_class is not None]  # any package's
OWN_WITH_OPTIONS = [name for name in own_names("harness.methods") if name != "grpo"]


def test_every_method_of_the_project_but_grpo_has_options():
    assert [name for name in own_names("harness.methods") if name in WITH_OPTIONS] == OWN_WITH_OPTIONS
    config = load_config(None, {"method": "grpo", "model": "m", "dataset": "d", "out": "o"})
    assert METHODS["grpo"].resolved_options(config) == {}
    with pytest.raises(HarnessError, match="method 'grpo' has no options, but the config sets \\['x'\\]"):
        METHODS["grpo"].options_of(dataclasses.replace(config, options={"x": 1}))


@pytest.mark.parametrize("method", WITH_OPTIONS)
def test_every_option_has_its_help_and_the_method_reads_the_class_from_options_py(method):
    cls = METHODS[method].options_class
    if method in OWN_WITH_OPTIONS:  # the project's layout; another package keeps its options its own way
        assert cls.__module__ == f"trainers.methods.{method}.options"
    for field in dataclasses.fields(cls):
        assert field.metadata.get("help"), f"options.{field.name} of {method} has no help"
    # dapo: the loss the arena's default per-group normaliser needs
    values = {"method": method, "model": "m", "dataset": "d", "out": "o", "loss_type": "dapo"}
    config = load_config(None, values)
    assert METHODS[method].options_of(config) == cls()  # no `options:`: the defaults
    with pytest.raises(HarnessError, match=f"unknown {cls.method} options \\['nope'\\]"):
        METHODS[method].options_of(dataclasses.replace(config, options={"nope": 1}))


def test_the_options_modules_and_the_docs_table_import_without_torch():
    modules = ", ".join(f"'trainers.methods.{m}.options'" for m in OWN_WITH_OPTIONS)
    code = (
        "import importlib, importlib.util, sys; sys.modules['torch'] = None\n"
        f"[importlib.import_module(m) for m in ({modules})]\n"
        "spec = importlib.util.spec_from_file_location('hook', 'scripts/mkdocs_options.py')\n"
        "hook = importlib.util.module_from_spec(spec); spec.loader.exec_module(hook)\n"
        f"print(sum(len(hook.rows(m)) for m in {OWN_WITH_OPTIONS!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    fields = sum(len(dataclasses.fields(METHODS[m].options_class)) for m in OWN_WITH_OPTIONS)
    assert int(done.stdout) == fields > 0
