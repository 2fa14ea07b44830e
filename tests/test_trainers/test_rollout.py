"""The Rollout record: validation and continuation across segments."""

import pytest

from trainers.rollout import Rollout


def make(**fields) -> Rollout:
    base = dict(prompt_ids=[1, 2], completion_ids=[7, 8, 9], role="solver", group="q1", task="math")
    return Rollout(**{**base, "finish_reason": "unfinished", **fields})


def test_one_segment_by_default_and_flags():
    r = make(finish_reason="length", trainable=False)
    assert r.segments == [3] and r.truncated and r.finished and not r.trainable
    assert not make(finish_reason="stop").truncated
    assert not make().finished


def test_continued_appends_tokens_logprobs_segments_and_versions():
    r = make(sampling_logprobs=[-0.1, -0.2, -0.3], policy_versions=[0], meta={"gold": "4"})
    r = r.continued([10, 11], "unfinished", logprobs=[-0.4, -0.5], policy_version=1)
    r = r.continued([2], "stop", logprobs=[-0.6], policy_version=2)
    assert r.completion_ids == [7, 8, 9, 10, 11, 2]
    assert r.sampling_logprobs == [-0.1, -0.2, -0.3, -0.4, -0.5, -0.6]
    assert r.segments == [3, 2, 1] and r.policy_versions == [0, 1, 2]
    assert (r.prompt_ids, r.group, r.meta, r.finished) == ([1, 2], "q1", {"gold": "4"}, True)


def test_continuation_is_refused_when_it_would_lose_track():
    with pytest.raises(ValueError, match="nothing to continue"):
        make(finish_reason="stop").continued([1], "stop")
    with pytest.raises(ValueError, match="log-probs"):
        make(sampling_logprobs=[0.0, 0.0, 0.0]).continued([1], "stop")
    with pytest.raises(ValueError, match="policy version"):
        make().continued([1], "stop", policy_version=3)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"finish_reason": "eos"}, "finish_reason 'eos'"),
        ({"sampling_logprobs": [0.0]}, "1 sampling log-probs for 3 tokens"),
        ({"segment_lengths": [2, 2]}, "do not add up to 3"),
        ({"segment_lengths": [1, 2], "policy_versions": [0]}, "1 policy versions for 2 segments"),
        ({"reward": float("nan")}, "reward nan is not a finite number"),
        ({"reward": float("-inf")}, "reward -inf is not a finite number"),
    ],
)
def test_inconsistent_rollouts_are_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        make(**fields)


# --- the reward a rollout carries, which the base Method.score returns ---------------------------------


def test_the_base_score_returns_the_rewards_the_rollouts_carry_and_refuses_a_missing_one():
    import torch

    from trainers.method import Method

    class Scored(Method):
        name = "scored"

    rewards = Scored().score([make(reward=1.0), make(reward=-0.5, role="verifier"), make(reward=0)])
    assert torch.equal(rewards, torch.tensor([1.0, -0.5, 0.0])) and rewards.dtype == torch.float32
    with pytest.raises(ValueError, match="method 'scored': 1 rollouts have no reward .*override `score`"):
        Scored().score([make(reward=1.0), make()])


def test_the_base_metrics_and_samples_hand_over_what_the_step_set_once():
    from trainers.method import Method

    class Step(Method):
        name = "step"

    method = Step()
    assert method.metrics([], None) == {} and method.take_samples() == []
    method._metrics, method._samples = {"x": 1.0}, [{"text": "a"}]
    assert method.metrics([], None) == {"x": 1.0}
    assert method.take_samples() == [{"text": "a"}] and method.take_samples() == []
    assert Step().take_samples() == []  # another instance shares nothing


def test_a_ulorl_pool_saved_with_rewards_in_meta_loads_with_rollouts_carrying_them():
    from dataclasses import asdict

    from trainers.methods.ulorl.pool import InFlight

    sample = asdict(make(finish_reason="stop", meta={"text": "t"}, reward=1.0))
    saved = {"key": "k", "row": {}, "prompt_ids": [1, 2], "admitted": 0, "finished_at": [3], "completed": 3}
    legacy = {k: v for k, v in sample.items() if k != "reward"} | {"meta": {"text": "t", "reward": 1.0}}
    for state in (sample, legacy):  # this version's, and one from before rollouts carried a reward
        loaded = InFlight.from_state({**saved, "samples": [state]}).samples[0]
        assert loaded.reward == 1.0 and loaded.meta == {"text": "t"}
    assert InFlight.from_state({**saved, "samples": [sample]}).state()["samples"] == [sample]
