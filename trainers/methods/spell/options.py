"""SPELL's own settings (`options:` in a train config), each with its default, bounds and help;
importable without torch (the docs build the method page's table from this dataclass)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from harness.core.settings import setting
from trainers.method import MethodOptions

SIGMA = 0.5 / 3  # 3 sigma spans 0.5 to either end of [0, 1]
VOTES = ("strict", "mode")
MAPPINGS = ("gaussian", "azr", "rzero")  # Fig. 5: SPELL's, Absolute Zero's 1 - mean, R-Zero's


@dataclass(frozen=True)
class SpellOptions(MethodOptions):
    """SPELL's own settings (`options:` in the config); defaults are the paper's (§5.1, App. C.3)."""

    method: ClassVar[str] = "SPELL"
    documents_per_question: int = setting(5, "m, §4.1", minimum=1)
    memory_size: int = setting(3, 'L, §4.1; 0: "w/o History Memory"', minimum=0)
    verifier_samples: int = setting(8, 'judgments per answer (G), Eq. 4; 1: "w/o Majority Voting"', minimum=1)
    questions_per_round: int = setting(480, "the released code's generation batch", minimum=1)
    max_rounds: int = setting(10, "the released code's cap on generation rounds", minimum=1)
    short_batch: str = setting(
        "error",
        'after max_rounds short of n groups: "error" (the code) or "train"',
        choices=("error", "train"),
    )
    max_input_tokens: int = setting(16384, "prompts cut in the middle to this, App. C.2", minimum=2)
    questioner_max_tokens: int | None = setting(None, "default: max_completion_length", minimum=1)
    questioner_prefill: str = setting(
        "",
        "text the questioner's reply is made to start with (after the generation header), read as part of "
        'its proposal: a format aid for small models such as \'```json\\n{"question": "\'; "" as the paper',
    )
    responder_max_tokens: int | None = setting(
        None, "the responders' token budget; default: max_completion_length", minimum=1
    )
    verifier_max_tokens: int | None = setting(
        None, "the verifiers' token budget; default: max_completion_length", minimum=1
    )
    questioner_reward: str = setting(
        "gaussian", 'or Fig. 5\'s "azr" (1 - mean), "rzero" (1 - 2|mean - 0.5|)', choices=MAPPINGS
    )
    sigma: float = setting(SIGMA, "Eq. 7; Table 3 tries 0.5/6 and 0.5/2", exclusive_minimum=0)
    format_penalty: float = setting(-1.0, 'Eq. 7; 0: "w/o Format Penalty"', maximum=0)
    questioner_baseline: str = setting(
        "batch", 'Eq. 9 as written; "task": per task, as the released code', choices=("batch", "task")
    )
    memory_push: str = setting(
        "paper",
        'push when 0 < mean < 1; "code": 0.01 <= mean <= 1, as the code does',
        choices=("paper", "code"),
    )
    vote: str = setting(
        "strict", 'Eq. 4; "mode": the code\'s mode over YES/NO/invalid, invalid rewarded -1', choices=VOTES
    )
    grounding_filter: bool = setting(True, 'False: "w/o Grounding Filter"')
    verifier: bool = setting(True, 'False: "w/o Verifier", the rule alone rewards responders')
    verify_choice: bool = setting(
        False,
        "the paper (D.5) rewards multiple choice by the letter alone; True: the code's verifier on doc_mc "
        "too, whose false YES raises a wrong letter's reward",
    )
    update_consistency: bool = setting(
        True, "train the verifier only where its majority equals the rule (the released code)"
    )
    negatives_per_task: bool = setting(True, "questioner negatives stratified by task (§4.3)")
    train_questioner: bool = setting(True, 'False: "w/o Update" of the questioner')
    train_verifier: bool = setting(True, 'False: "w/o Update" of the verifier')
    logged_questions: int = setting(8, "questions per step written to OUT/samples.jsonl", minimum=0)
