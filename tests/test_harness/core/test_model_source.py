"""Where `--model` points, decided before anything is written: a missing folder is one line naming it, a
Hub id the Hub cannot serve fails in seconds (offline mode, or a probe of an unreachable endpoint), a
cached one loads offline; and the basics: --raw-prompt, --model-arg, --trust-remote-code, --version."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO
from inprocess import TWO_ITEMS, harness, one_line_error

from harness.core.hub import looks_like_path
from harness.core.store import RUN


@pytest.fixture
def items(tmp_path) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text(TWO_ITEMS)
    return path


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (connections are refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def eval_process(tmp_path: Path, model: str, items: Path, *extra: str, env: dict | None = None):
    """`python -m harness eval` in a fresh process (the Hub probe is cached per process), timed."""
    command = [sys.executable, "-m", "harness", "eval", "--model", model, "--benchmarks", f"jsonl:{items}"]
    command += ["--scorer", "math", "--n", "1", "--max-tokens", "4", "--out", str(tmp_path / "out"), *extra]
    started = time.monotonic()
    done = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300
    )
    return done, time.monotonic() - started


@pytest.mark.parametrize("spelling", ["./missing", "{tmp}/missing", "~/no-such-harness-model", "{tmp}/a/b/c"])
def test_a_missing_folder_is_one_line_naming_it_and_nothing_is_written(
    tmp_path, items, spelling, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    model = spelling.format(tmp=tmp_path)
    done = harness("eval", "--model", model, "--benchmarks", f"jsonl:{items}", "--scorer", "math",
                   "--out", str(tmp_path / "out"))  # fmt: skip
    assert done.code == 2 and one_line_error(done) == f"--model {model}: no such folder"
    assert not (tmp_path / "out").exists()


def test_a_file_or_a_folder_without_a_config_is_not_a_model(tmp_path, items):
    (tmp_path / "weights.bin").write_bytes(b"\0")
    (tmp_path / "empty").mkdir()
    for model, said in [
        (tmp_path / "weights.bin", "is a file, not a model folder"),
        (tmp_path / "empty", f"{tmp_path / 'empty'} is not a Hugging Face model folder (no config.json)"),
    ]:
        done = harness("eval", "--model", str(model), "--benchmarks", f"jsonl:{items}", "--scorer", "math",
                       "--out", str(tmp_path / "out"))  # fmt: skip
        assert done.code == 2 and one_line_error(done) == f"--model {model}: {said}"
        assert not (tmp_path / "out").exists()


def test_paths_and_hub_ids_are_told_apart(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    for path in ("/abs", "./m", "../m", "~/m", ".", "a/b/c", "runs/checkpoint-8"):
        assert looks_like_path(path), path
    for hub_id in ("Qwen/Qwen3-8B", "gpt2", "org/name"):
        assert not looks_like_path(hub_id), hub_id


@pytest.mark.parametrize("how", ["unreachable", "offline"])
def test_a_hub_id_the_hub_cannot_serve_fails_in_seconds_with_one_line(tmp_path, items, how):
    env = {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_CACHE": str(tmp_path / "hf" / "hub")}
    if how == "offline":
        env["HF_HUB_OFFLINE"] = "1"
    else:
        env |= {"HF_HUB_OFFLINE": "", "HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}"}
    done, seconds = eval_process(tmp_path, "some-org/some-model", items, env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: --model some-org/some-model: not a local folder, and not in the Hugging Face cache while the "
        "Hub cannot be reached ("
    )
    assert seconds < 20  # was 64 s and 12 retry lines
    assert not (tmp_path / "out").exists()


def hub_cache(tmp_path: Path, model: Path, repo: str) -> Path:
    """`model` laid out as huggingface_hub caches a download of `repo` at main."""
    hub = tmp_path / "hf" / "hub"
    folder = hub / f"models--{repo.replace('/', '--')}"
    commit = "0" * 40
    shutil.copytree(model, folder / "snapshots" / commit)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(commit)
    return hub


def test_a_cached_hub_id_loads_from_the_cache_when_the_hub_is_unreachable(tmp_path, items, tiny_model):
    hub = hub_cache(tmp_path, tiny_model, "harness-tests/tiny")
    env = {"HF_HUB_CACHE": str(hub), "HF_HUB_OFFLINE": "", "HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}"}
    done, seconds = eval_process(tmp_path, "harness-tests/tiny", items, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "out" / RUN).read_text())["config"]["model"] == "harness-tests/tiny"
    assert "Retrying" not in done.stderr and seconds < 120


@pytest.fixture
def templateless(tiny_model, tmp_path) -> Path:
    """The tiny model with its chat template removed: a base model."""
    folder = Path(shutil.copytree(tiny_model, tmp_path / "base-model"))
    (folder / "chat_template.jinja").unlink(missing_ok=True)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config.pop("chat_template", None)
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder


def test_a_model_without_a_chat_template_is_refused_before_writing_unless_raw_prompt(
    tmp_path, items, templateless
):
    out = tmp_path / "out"
    common = ["--model", str(templateless), "--benchmarks", f"jsonl:{items}", "--scorer", "math", "--n", "1",
              "--max-tokens", "4", "--out", str(out)]  # fmt: skip
    refused = harness("eval", *common)
    assert one_line_error(refused) == (
        f"model '{templateless}' has no chat template; pass --raw-prompt to send the prompt text as it is"
    )
    assert not out.exists()
    done = harness("eval", *common, "--raw-prompt", "--model-arg", "low_cpu_mem_usage=true")
    assert done.code == 0, done.stderr
    info = json.loads((out / RUN).read_text())
    assert info["config"]["raw_prompt"] is True
    assert info["config"]["model_args"] == {"low_cpu_mem_usage": True}
    assert info["engine"]["chat_template_sha256"] is None and info["engine"]["raw_prompt"] is True
    template = info["prompts"][info["config"]["benchmarks"][0]]["template"]
    sent = {
        json.loads(line)["item_id"]: json.loads(line)["prompt_hash"]
        for line in (out / "generations.jsonl").open()
    }
    for item in map(json.loads, TWO_ITEMS.splitlines()):  # the user's text itself, no template around it
        text = template.replace("{problem}", item["problem"])
        assert sent[item["id"]] == hashlib.sha256(text.encode()).hexdigest()


def test_options_that_change_loading_are_part_of_the_runs_identity(tmp_path, items, tiny_model):
    out = tmp_path / "out"
    common = ["--model", str(tiny_model), "--benchmarks", f"jsonl:{items}", "--scorer", "math", "--n", "1",
              "--max-tokens", "4", "--out", str(out)]  # fmt: skip
    assert harness("eval", *common).code == 0
    plain = json.loads((out / RUN).read_text())["config"]
    assert not {"raw_prompt", "model_args", "trust_remote_code"} & set(plain)  # older runs keep their hash
    again = harness("eval", *common, "--model-arg", "low_cpu_mem_usage=true")
    assert (
        again.code == 2
        and "model_args: existing run has None, this command has {'low_cpu_mem_usage': True}" in again.stderr
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model-arg", "trust_remote_code=true"],
         "--model-arg trust_remote_code would run the model's code: use --trust-remote-code"),
        (["--model-arg", "attn_implementation=kernels-community/flash-attn"], "use --trust-remote-code"),
        (["--model-arg", "dtype=float32"], "--model-arg dtype: use its own option, --dtype"),
        (["--model-arg", "x"], "--model-arg expects KEY=VALUE"),
        (["--backend", "vllm", "--model-arg", "enable_prefix_caching=false"], "the vllm backend sets it"),
        (["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model-arg", "a=1"],
         "--model-arg is for local engines"),
        (["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--raw-prompt"],
         "--raw-prompt with --backend openai needs --api completions"),
    ],
)  # fmt: skip
def test_model_args_and_raw_prompt_refusals_are_one_line(tmp_path, items, tiny_model, args, message):
    done = harness("eval", "--model", str(tiny_model), "--benchmarks", f"jsonl:{items}", "--scorer", "math",
                   "--out", str(tmp_path / "out"), *args)  # fmt: skip
    assert done.code == 2 and message in one_line_error(done)
    assert not (tmp_path / "out").exists()


@pytest.fixture
def remote_code_model(tiny_model, tmp_path) -> tuple[Path, Path]:
    """The tiny model with its own modeling code (config.json's auto_map), which leaves a mark when run."""
    folder = Path(shutil.copytree(tiny_model, tmp_path / "custom-model"))
    mark = tmp_path / "code-ran"
    (folder / "modeling_marked.py").write_text(
        "from pathlib import Path\n"
        "from transformers import Qwen2ForCausalLM\n\n"
        f"Path({str(mark)!r}).write_text('ran')\n\n\n"
        "class MarkedForCausalLM(Qwen2ForCausalLM):\n"
        "    pass\n"
    )
    config = json.loads((folder / "config.json").read_text())
    config["auto_map"] = {"AutoModelForCausalLM": "modeling_marked.MarkedForCausalLM"}
    config["architectures"] = ["MarkedForCausalLM"]  # its own class, as a remote-code model names it
    (folder / "config.json").write_text(json.dumps(config))
    return folder, mark


def test_a_models_code_runs_only_with_trust_remote_code_which_is_recorded_and_said(
    tmp_path, items, remote_code_model
):
    folder, mark = remote_code_model
    common = ["--model", str(folder), "--benchmarks", f"jsonl:{items}", "--scorer", "math", "--n", "1",
              "--max-tokens", "4"]  # fmt: skip
    plain = harness("eval", *common, "--out", str(tmp_path / "plain"))
    assert plain.code == 0, plain.stderr
    assert not mark.exists()  # transformers' own Qwen2 class, not the folder's
    trusted = harness("eval", *common, "--out", str(tmp_path / "trusted"), "--trust-remote-code")
    assert trusted.code == 0, trusted.stderr
    assert mark.read_text() == "ran"
    assert f"--trust-remote-code: the Python code in {folder}" in " ".join(trusted.stderr.split())
    info = json.loads((tmp_path / "trusted" / RUN).read_text())
    assert info["config"]["trust_remote_code"] is True and info["engine"]["trust_remote_code"] is True


def test_version_names_the_package_and_the_checkout_commit():
    done = subprocess.run(
        [sys.executable, "-m", "harness", "--version"], capture_output=True, text=True, cwd="/"
    )
    assert done.returncode == 0, done.stderr
    from harness import __version__

    where = subprocess.run(
        [sys.executable, "-c", "import harness; print(harness.__file__)"],
        capture_output=True, text=True, cwd="/",
    )  # fmt: skip
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True
    )
    from_checkout = Path(where.stdout.strip()).resolve() == REPO / "harness" / "__init__.py"
    if from_checkout and head.returncode == 0:
        assert done.stdout == f"harness {__version__} (git {head.stdout.strip()})\n"
    else:  # an installed wheel (as under tox), whose files carry no commit
        assert done.stdout == f"harness {__version__}\n"


def test_train_refuses_a_missing_folder_first_and_runs_a_models_code_when_told(tmp_path, remote_code_model):
    from benchmarks.arithmetic import arithmetic_rows, write_jsonl

    folder, mark = remote_code_model
    data = write_jsonl(tmp_path / "train.jsonl", arithmetic_rows(8, seed=1))
    common = ["--dataset", str(data), "--max-steps", "1", "--save-steps", "1", "--num-generations", "2",
              "--prompts-per-step", "2", "--max-completion-length", "4"]  # fmt: skip
    missing = harness(
        "train", "grpo", "--model", str(tmp_path / "nowhere"), *common, "--out", str(tmp_path / "a")
    )
    assert one_line_error(missing) == f"--model {tmp_path / 'nowhere'}: no such folder"
    assert not (tmp_path / "a").exists()
    out = tmp_path / "trusted"
    done = harness("train", "grpo", "--model", str(folder), *common, "--out", str(out), "--trust-remote-code")
    assert done.code == 0, done.stderr
    assert mark.read_text() == "ran"
    assert f"--trust-remote-code: the Python code in {folder}" in " ".join(done.stderr.split())
    saved = json.loads((out / "train.json").read_text())
    assert saved["config"]["trust_remote_code"] is True
