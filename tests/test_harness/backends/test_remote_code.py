"""A config cannot opt into code: a setting that makes transformers, TRL or vLLM run a model folder's or
the Hub's Python is refused at any depth of a train config, in `--set`, in a judge's settings and in
`--model-arg`; only the command line's `--trust-remote-code` allows it, and it is recorded."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inprocess import harness, one_line_error

from harness import HarnessError
from harness.backends.model_args import parse_model_args
from harness.backends.remote_code import CODE_KEYS, KERNEL_KEYS, code_settings
from trainers.config import TrainConfig, load_config, parse_set
from trainers.integration.run import grpo_args

BASE = {"method": "grpo", "model": "m", "dataset": "aime24", "out": "o"}
HARMLESS_KEYS = st.sampled_from(["dtype", "revision", "epsilon_high", "attn_implementation", "k", "x_y"])
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.sampled_from(["sdpa", "eager", "bf16", "a b", "{", "[1, 2]"])
)
HARMLESS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(HARMLESS_KEYS, inner, max_size=3)),
    max_leaves=12,
)
# every spelling of a code key a YAML file or --set could carry
CODE_KEY = st.sampled_from(sorted(CODE_KEYS)).flatmap(
    lambda k: st.sampled_from([k, k.upper(), k.replace("_", "-"), f" {k} "])
)
HUB_KERNEL = st.sampled_from(["kernels-community/flash-attn", "org/kernel@v1", "org/k:fn"])


def join(parent: str, child: str) -> str:
    return parent + child if child.startswith("[") else f"{parent}.{child}"


def bury(container, key, value, path: list[int]):
    """`container` (a mapping) with {key: value} placed at the depth `path` picks (a list, a mapping, or
    a mapping holding JSON text per step), and the dotted path code_settings should name."""
    node, where = {key: value}, str(key)
    for i, choice in enumerate(reversed(path)):
        name = f"k{i}"
        if choice == 0:
            node, where = [node], join("[0]", where)
        elif choice == 1:
            node, where = {name: json.dumps(node)}, join(name, where)  # JSON text, as TRL reads it
        else:
            node, where = {name: node}, join(name, where)
    return {**container, "outer": node}, join("outer", where)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    harmless=st.dictionaries(HARMLESS_KEYS, HARMLESS, max_size=4),
    key=CODE_KEY,
    value=st.one_of(st.booleans(), st.just("main"), st.dictionaries(HARMLESS_KEYS, SCALARS, max_size=2)),
    path=st.lists(st.integers(0, 2), max_size=6),
)
def test_a_code_key_is_found_at_any_depth_and_nothing_else_is(harmless, key, value, path):
    assert list(code_settings(harmless)) == []
    hostile, where = bury(harmless, key, value, path)
    found = list(code_settings(hostile))
    assert len(found) == 1 and found[0].replace(" ", "").lower().replace("-", "_") == where.replace(
        " ", ""
    ).lower().replace("-", "_")


@settings(max_examples=60, deadline=None)
@given(
    key=st.sampled_from(sorted(KERNEL_KEYS)), kernel=HUB_KERNEL, path=st.lists(st.integers(0, 2), max_size=4)
)
def test_an_attention_implementation_from_the_hub_is_code_and_a_builtin_one_is_not(key, kernel, path):
    assert list(code_settings(bury({}, key, "sdpa", path)[0])) == []
    assert len(list(code_settings(bury({}, key, kernel, path)[0]))) == 1


def test_nesting_too_deep_to_walk_is_refused_not_recursed():
    deep: dict = {}
    for _ in range(5000):
        deep = {"k": deep}
    assert [p for p in code_settings(deep) if "nested deeper" in p]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    group=st.sampled_from(["trl", "options", "cold_start", "judge", "chat_template_kwargs"]),
    key=CODE_KEY,
    path=st.lists(st.integers(0, 2), max_size=3),
)
def test_a_train_config_file_with_a_code_key_anywhere_is_refused_naming_it(tmp_path, group, key, path):
    buried, where = bury({}, key, True, path)
    config = {**BASE, group: {"model": "judge", **buried}}
    file = tmp_path / "hostile.yaml"
    file.write_text(yaml.safe_dump(config))
    with pytest.raises(HarnessError, match="pass --trust-remote-code on the command line") as refused:
        load_config(file, {})
    assert str(refused.value).startswith(f"config {file}: {group}.")
    with pytest.raises(HarnessError, match="--trust-remote-code"):  # built in code: the same refusal
        TrainConfig(**config)


@pytest.mark.parametrize(
    "pair",
    [
        "trust_remote_code=true",
        "trl.trust_remote_code=true",
        "trl.model_init_kwargs={trust_remote_code: true}",
        'trl.model_init_kwargs={"attn_implementation": "kernels-community/flash-attn"}',
        "trl.generation_kwargs={custom_generate: org/repo}",
        "judge={model: j, trust_remote_code: true}",
        "options.x=[{auto_map: {AutoModel: m.M}}]",
    ],
)
def test_set_cannot_opt_in_either(pair):
    with pytest.raises(HarnessError, match=r"^--set: .* pass --trust-remote-code on the command line"):
        load_config(None, {**BASE, **parse_set([pair])})


def test_the_flag_alone_trusts_remote_code_and_it_is_part_of_the_runs_identity():
    plain = load_config(None, dict(BASE))
    trusted = load_config(None, dict(BASE), trust_remote_code=True)
    assert "trust_remote_code" not in plain.identity  # older runs keep their hash
    assert trusted.identity["trust_remote_code"] is True and trusted.hash != plain.hash
    assert grpo_args(trusted).trust_remote_code is True and grpo_args(plain).trust_remote_code is False


def test_train_dry_run_with_the_flag_prints_it_and_a_config_cannot_set_it(tmp_path):
    done = harness("train", "grpo", "--model", "m", "--dataset", "aime24", "--dry-run", "--trust-remote-code")
    assert done.code == 0 and json.loads(done.stdout)["config"]["trust_remote_code"] is True
    file = tmp_path / "c.yaml"
    file.write_text("trl:\n  model_init_kwargs: '{\"trust_remote_code\": true}'\n")
    refused = harness(
        "train", "grpo", "--model", "m", "--dataset", "aime24", "--dry-run", "--config", str(file)
    )
    assert refused.code == 2
    assert one_line_error(refused) == (
        f"config {file}: trl.model_init_kwargs.trust_remote_code would run code from a model folder or the "
        "Hub; a config cannot allow that: pass --trust-remote-code on the command line instead"
    )


def test_model_args_are_typed_and_code_keys_point_at_the_flag():
    assert parse_model_args(["a=1", "b=0.5", "c=TRUE", "d=false", "e=sdpa", "f=", "g=1e3"]) == {
        "a": 1, "b": 0.5, "c": True, "d": False, "e": "sdpa", "f": "", "g": 1000.0
    }  # fmt: skip
    for refused, message in [
        (["trust_remote_code=true"], "--model-arg trust_remote_code would run the model's code: use --trust"),
        (["attn_implementation=kernels-community/flash-attn"], "use --trust-remote-code"),
        (["code_revision=main"], "use --trust-remote-code"),
        (["no-equals"], "expects KEY=VALUE"),
        (["1x=2"], "expects KEY=VALUE"),
        (["a=1", "a=2"], "--model-arg a is given twice"),
    ]:  # fmt: skip
        with pytest.raises(HarnessError, match=message):
            parse_model_args(refused)


@settings(max_examples=40, deadline=None)
@given(key=CODE_KEY, path=st.lists(st.integers(0, 2), max_size=3))
def test_a_judge_never_runs_a_models_code_whatever_its_settings_say(key, path):
    """A rescore builds the judge from run.json's settings: a handed run folder cannot opt in either."""
    from harness.scoring.judge import JudgeConfig

    buried, _ = bury({"model": "judge", "base_url": "http://127.0.0.1:9/v1"}, key, True, path)
    with pytest.raises(HarnessError, match="a judge never runs a model's own code"):
        JudgeConfig.from_settings(buried)
    assert JudgeConfig.from_settings({"model": "judge"}).engine.trust_remote_code is False
