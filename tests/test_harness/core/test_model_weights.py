"""Weights as transformers would load them (issue 52, part 6): a model folder is refused, before OUT is
written, when any `*.index.json` names a shard that is not a safetensors file (a pickled shard may have
any name), besides the pickled file names themselves."""

import json
import shutil

import pytest
from helpers import run_cli

from harness import HarnessError
from harness.core.io.read import refuse_pickled_weights


def folder_with(tmp_path, files: dict[str, str]):
    folder = tmp_path / "model"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize(
    "files, refused",
    [
        (
            {"pytorch_model.bin.index.json": json.dumps({"weight_map": {"w": "evil.dat"}}), "evil.dat": "x"},
            "'evil.dat'",
        ),
        (
            {"model.safetensors.index.json": json.dumps({"weight_map": {"w": "a.safetensors", "v": "b.pt"}})},
            "'b.pt'",
        ),
        ({"pytorch_model.fp16.bin": "x"}, "pytorch_model.fp16.bin: weights saved as a pickle"),
        ({"model.safetensors.index.json": "[1, 2]"}, "not a weights index"),
        ({"model.safetensors.index.json": "{"}, "invalid JSON"),
    ],
)
def test_pickled_shards_are_refused_whatever_their_names(tmp_path, files, refused):
    with pytest.raises(HarnessError, match=refused.replace("(", r"\(").replace(")", r"\)")):
        refuse_pickled_weights(folder_with(tmp_path, files))


def test_a_safetensors_index_of_safetensors_shards_passes(tmp_path):
    index = {"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}
    refuse_pickled_weights(folder_with(tmp_path, {"model.safetensors.index.json": json.dumps(index)}))


def test_eval_refuses_before_out_is_written(tiny_model, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(tiny_model, model)
    (model / "pytorch_model.bin.index.json").write_text(json.dumps({"weight_map": {"w": "shard.data"}}))
    out = tmp_path / "out"
    done = run_cli("eval", "--benchmarks", "aime24", "--model", str(model), "--out", str(out), check=False)
    assert done.returncode == 2 and "'shard.data', not a safetensors file" in done.stderr
    assert not out.exists()
