"""The studies: for each method, the regime its warm start sets up, the arms trained from it (the method,
its mechanism switched off, GRPO) and the metrics that say whether the mechanism did its job.

Every arm of a study shares the warm start, the training set, the sizes and the seeds (`BASE`); an arm
adds its method and settings. A mechanism metric is read from each run's metrics.jsonl, averaged over
the run's steps, and compared seed by seed: `better` is the direction the paper says the method moves it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness import HarnessError


@dataclass(frozen=True)
class Arm:
    name: str  # method, ablation or grpo
    method: str  # `harness train METHOD`
    settings: dict[str, Any] = field(default_factory=dict)  # config keys on top of the study's
    label: str = ""


@dataclass(frozen=True)
class Metric:
    key: str  # a metrics.jsonl key
    label: str
    better: int  # +1: the method should raise it against the baseline, -1: lower it


@dataclass(frozen=True)
class Study:
    name: str
    method: str
    regime: str  # what the warm start sets up, in a sentence
    style: str  # the warm start's completion style (trainers/studies/task.py)
    levels: str
    config: dict[str, Any]  # config keys every arm shares
    arms: tuple[Arm, ...]
    metrics: tuple[Metric, ...]  # the first is the verdict's
    engaged: tuple[str, ...] = ()  # keys the method's own arm must log above 0 (the mechanism, or its regime)
    # a step counts only where this key, if the run logs it, is above 0 (UloRL's steps that released no
    # group train nothing, and TRL logs their entropy as 0)
    active: str | None = None
    gpu: dict[str, Any] = field(default_factory=dict)  # the GPU profile's settings for the method's own arms
    # or "programs" (trainers/studies/programs.py), "documents" (documents.py): the warm start is then the
    # method's own cold start, writing `demos_per_example` demonstrations per example
    task: str = "sums"
    demos_per_example: int = 1
    warm_examples: int = 192  # the warm start's demonstrations, unless --warm-examples
    warm_learning_rate: float = 5e-5
    eval_max_tokens: int | None = None  # the held-out evaluation's budget (default: max_completion_length)

    def arm(self, name: str) -> Arm:
        return next(a for a in self.arms if a.name == name)


# every arm: the warm start's sums, the integer rule, and TRL's defaults this project uses on the CPU
BASE: dict[str, Any] = {
    "scorer": "integer",
    "prompt_template": "{problem}",
    "prompts_per_step": 4,
    "num_generations": 8,
    "learning_rate": 2.0e-5,
    "temperature": 0.8,
    "top_p": 1.0,
    "beta": 0.0,
    "loss_type": "dapo",
    "report_to": [],
    "trl": {"gradient_checkpointing": True, "lr_scheduler_type": "constant", "max_grad_norm": 1.0},
}

# SmolLM2 has no think block: every blank line is a step boundary (configs/train/spae-cpu.yaml)
_SPAE = {"delimiter": "\n\n", "probe_max_tokens": 8, "max_refill_rounds": 2}
# the policy judges itself; SmolLM2-135M boxes no verdict unprompted (configs/train/arena-cpu.yaml)
_ARENA = {
    "judge_max_tokens": 4,
    "judge_context": 2048,
    "keep_tail_tokens": 256,
    "judge_prefill": "The better response is \\boxed{",
}

# Absolute Zero at 135M on the CPU: configs/train/azr-cpu.yaml's options with 2 references (shorter
# prompts) and shorter completions; the study's learning rate, not the paper's 1e-6 (8 steps move nothing)
_AZR = {
    "references": 2,
    "mc_samples": 4,
    "num_inputs": 4,
    "template": "chat",
    "max_prompt_tokens": 1536,
    "propose_max_tokens": 128,
    "solve_max_tokens": 64,
    "timeout": 5.0,
}
_AZR_RUN = {"dataset": "library", "trl": {"entropy_coef": 0.001}}  # the library seeds the buffers

# SPELL at 135M on the CPU: configs/train/spell-cpu.yaml's options (a JSON prefill for the questioner), with
# fewer questions a step
_SPELL = {
    "documents_per_question": 2,
    "memory_size": 3,
    "verifier_samples": 4,
    "questions_per_round": 4,  # spell-cpu.yaml's 8 made a step 8 minutes here, its verifier's 128 judgments 5
    "max_rounds": 1,
    "short_batch": "train",
    "max_input_tokens": 1024,
    "questioner_max_tokens": 96,
    "questioner_prefill": '```json\n{"question": "',
    "responder_max_tokens": 32,
    "verifier_max_tokens": 32,
}

STUDIES = {
    s.name: s
    for s in (
        Study(
            name="ulorl",
            method="ulorl",
            regime="confident on the easy sums (two terms): positive samples' entropy below sigma",
            style="direct",
            levels="2x20,2x99,3x99",
            config={"max_completion_length": 24},
            arms=(
                Arm("method", "ulorl", {"options": {"segments": 2, "mpt_masking": "dynamic"}}, "UloRL"),
                Arm(
                    "ablation",
                    "ulorl",
                    {"options": {"segments": 2, "mpt_masking": "none"}},
                    "UloRL, no DMMPT",
                ),
                Arm("grpo", "grpo", {}, "GRPO"),
            ),
            metrics=(
                Metric("entropy", "mean token entropy of the trained samples", +1),
                Metric("ulorl/dmmpt/trigger_rate", "DMMPT trigger rate (positive samples)", +1),
                Metric("ulorl/dmmpt/masked_fraction", "masked token fraction", +1),
            ),
            engaged=("ulorl/dmmpt/trigger_rate", "ulorl/dmmpt/masked_fraction"),
            active="ulorl/trained_tokens",
            # UloRL's importance sampling is its own (configs/train/ulorl-1gpu.yaml)
            gpu={"trl": {"vllm_importance_sampling_correction": False}},
        ),
        Study(
            name="spae",
            method="spae",
            regime="the result stated first, then checked paragraph by paragraph: the probes saturate early",
            style="check",
            levels="2x20,2x99,3x99",
            # the warm start is sure of its digits: sampled at 1.0 (the paper's, App. D.3) so that a group
            # of four is not four copies of one answer
            config={
                "max_completion_length": 64,
                "prompts_per_step": 2,
                "num_generations": 4,
                "temperature": 1.0,
            },
            arms=(
                Arm("method", "spae", {"options": _SPAE}, "SPAE"),
                Arm("ablation", "spae", {"options": {**_SPAE, "alpha": 0.0}}, "SPAE, no saturation penalty"),
                Arm(
                    "grpo",
                    "spae",
                    {"options": {**_SPAE, "advantage": "dapo", "probes": True}},
                    "GRPO (DAPO), probed",
                ),
            ),
            metrics=(
                Metric("spae/check_share", "check-token share of correct samples", -1),
                Metric("completions/mean_length", "mean completion length (tokens)", -1),
                Metric("spae/saturated_steps", "saturated probed steps", +1),
                Metric("spae/r2w_rate", "right-to-wrong rate", -1),
            ),
            engaged=("spae/saturated_steps",),
        ),
        Study(
            name="arena",
            method="arena",
            regime="a mix of sums the model always gets right and ones it always misses: uniform groups",
            style="steps",
            levels="2x20,2x99,3x99",
            config={"max_completion_length": 40},
            arms=(
                Arm("method", "arena", {"options": _ARENA}, "Reasoning Arena"),
                Arm(
                    "ablation", "arena", {"options": {**_ARENA, "route": "none"}}, "Arena, rule rewards only"
                ),
                Arm("grpo", "grpo", {}, "GRPO"),
            ),
            metrics=(
                Metric("advantages/nonzero_fraction", "share of rollouts with a non-zero advantage", +1),
                Metric("frac_reward_zero_std", "share of groups whose rule rewards are uniform", -1),
                Metric("arena/routed_fraction", "share of groups the judge re-scores", +1),
            ),
            engaged=("arena/routed_fraction",),
        ),
        Study(
            name="azr",
            method="azr",
            regime="SFT on the library's proposals and answers (all three task types proposed in format) and"
            " on the study's own programs, each output a trace of the run",
            style="azr",
            # programs of 2-3 integer statements on small inputs (trainers/studies/programs.py): with 2-4
            # statements on inputs up to 50 the warm start solved 3 % of them, below the 0.2-0.8 band; on
            # the library alone it solved 11.7 % of one-statement programs: hence the traced programs
            levels="2x5,2x9,3x9",
            task="programs",
            demos_per_example=6,  # 2 roles x 3 task types
            warm_examples=72,  # azr-cpu.yaml's cold start (12 per (role, task)), and 72 traced programs
            warm_learning_rate=1e-4,
            eval_max_tokens=64,
            config={
                "scorer": None,  # the azr_deduction benchmark's
                # AZR: 6 proposals and 6 answers a step, 2 in each (task, role) slice that TRR++ whitens: with
                # 1 (the first study) every advantage was 0 and only the entropy bonus trained
                "prompts_per_step": 2,
                # the paper samples at 1.0 (a 7B model); at 135M that broke the format of every proposal
                # in the first attempt (0 of 6 valid: rambling thoughts cut off, fences missing)
                "temperature": 0.7,
                "max_completion_length": 128,
                "loss_type": "grpo",
            },
            arms=(
                Arm("method", "azr", {**_AZR_RUN, "options": _AZR}, "Absolute Zero"),
                Arm(
                    "ablation",
                    "azr",
                    {**_AZR_RUN, "options": {**_AZR, "reward_rule": "constant"}},
                    "AZR, constant proposer reward",
                ),
                # no proposer: GRPO's solver on the study's training programs, 8 answers a step
                Arm(
                    "grpo",
                    "grpo",
                    {"prompts_per_step": 2, "num_generations": 4, "max_completion_length": 64},
                    "GRPO on the training programs",
                ),
            ),
            metrics=(
                Metric(
                    "azr/propose/learnable_rate", "share of valid proposals solved sometimes, not always", +1
                ),
                Metric("azr/propose/valid_rate", "share of proposals that are valid tasks", +1),
                Metric("azr/induction/propose/valid_rate", "share of induction proposals that are valid", +1),
                Metric("advantages/nonzero_fraction", "share of rollouts with a non-zero advantage", +1),
            ),
            # the regime: the warm start proposes valid induction tasks (the hardest format) at all, and
            # the rewards reach the gradient (TRR++ gives a slice whose rewards are all equal 0)
            engaged=("azr/induction/propose/valid_rate", "advantages/nonzero_fraction"),
        ),
        Study(
            name="spell",
            method="spell",
            regime="SFT on the three roles over short key-value documents: questions the responder can solve",
            style="spell",
            levels="2x3,3x4,4x5",  # clusters of 2-4 documents stating 3-5 numbers each (documents.py)
            task="documents",
            demos_per_example=3,  # questioner, responder, verifier
            warm_examples=90,  # configs/train/spell-cpu.yaml's cold start: 10 per (role, task) at 1e-4
            warm_learning_rate=1e-4,
            eval_max_tokens=32,
            config={
                "prompts_per_step": 2,  # N questions whose responder group is trained
                "num_generations": 4,  # G
                "temperature": 0.7,  # SPELL paper, 5.1
                "top_p": 0.95,
                "max_completion_length": 96,
            },
            arms=(
                Arm("method", "spell", {"options": _SPELL}, "SPELL"),
                Arm(
                    "ablation",
                    "spell",
                    {"options": {**_SPELL, "train_questioner": False}},
                    "SPELL, questioner not trained",
                ),
                # no questioner: GRPO's responder on the study's questions about the training documents
                Arm("grpo", "grpo", {"max_completion_length": 32}, "GRPO on the training questions"),
            ),
            metrics=(
                Metric("spell/responder/band_distance", "distance of the solve rates from 0.5", -1),
                Metric("spell/responder/mean_mixed", "share of questions solved sometimes, not always", +1),
                Metric("spell/verifier/kappa", "verifier's agreement with the rule (Cohen's kappa)", +1),
            ),
        ),
    )
}


def study(name: str) -> Study:
    if name not in STUDIES:
        raise HarnessError(f"no study {name!r}; studies: {', '.join(STUDIES)}")
    return STUDIES[name]
