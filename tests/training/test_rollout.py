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
    ],
)
def test_inconsistent_rollouts_are_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        make(**fields)
