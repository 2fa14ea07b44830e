"""What a new method, its paper and a benchmark take: the docs' example packages (tests/example_packages.py:
the `brevity` method, its paper profile with the published CSV, the `sums` benchmark) installed in a
throwaway folder, and the suite's registry-wide tests run again with them installed. Every test that reads
a registry meets the newcomers and passes with no edit; the tests of what this project itself ships (its
configs, pages, transcribed tables and shared benchmark files) read its pyproject.toml and are unchanged."""

import os
import re
import subprocess
import sys

import pytest
from example_packages import install_examples
from helpers import REPO, run_cli

pytestmark = pytest.mark.slow

REGISTRY_WIDE = (
    "tests/test_harness/core/test_registry.py",
    "tests/test_harness/papers/test_paper_layouts.py",
    "tests/test_harness/report/test_paper_tables.py",
    "tests/test_trainers/test_method_options.py",
    "tests/test_trainers/integration/test_one_gpu_recipes.py",
    "tests/test_bad_input.py",
    "tests/test_docs.py",
)
# tests that must have met a newcomer, not merely passed
MET = (
    "test_paper_layouts.py::test_the_paper_csv_alone_reproduces_the_papers_table[brevity]",
    "test_method_options.py::test_every_option_has_its_help_and_the_method_reads_the_class_from_options_py"
    "[brevity]",
)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return install_examples(tmp_path_factory.mktemp("newcomers"))


def test_the_registry_wide_tests_pass_with_a_new_method_paper_and_benchmark(site, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(site)}
    argv = [sys.executable, "-m", "pytest", *REGISTRY_WIDE, "-m", "not slow", "-q", "-rA"]
    argv += ["-p", "no:cacheprovider", "--basetemp", str(tmp_path / "inner")]
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    passed = re.findall(r"^PASSED (\S+)", done.stdout, re.MULTILINE)
    for test in MET:
        assert any(p.endswith(test) for p in passed), f"{test} did not run: the newcomer was not met"


def test_the_commands_meet_the_new_paper(site):
    env = {"PYTHONPATH": str(site)}
    table = run_cli("table", "--layout", "brevity", "--with-paper", **env).stdout
    assert re.search(r"^\| SmolLM2-135M-Instruct Brevity \(paper\) \| \*\*62\.5\*\* \|$", table, re.M), table
    assert "brevity_paper/paper/brevity.csv" in table  # the footnote names where the numbers are kept
    listed = run_cli("list", **env).stdout
    assert re.search(r"^brevity +Brevity: avg@4 on the sums, T=0\.6\n +benchmarks: sums$", listed, re.M)
    unknown = run_cli("table", "--layout", "brevity", check=False)  # without the package
    assert unknown.returncode != 0 and "brevity" in unknown.stderr
