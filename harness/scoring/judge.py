"""An LLM judge: does the predicted answer carry the ground truth? YES or NO, from any backend.

The judge sees the question, the predicted answer and the ground truth through a versioned prompt
(`spell-v1`, SPELL's Table 5 judge, is the default; a prompt file can be given instead, versioned
by its hash). Each verdict is parsed from the text after the judge's last `</think>`: `[[YES]]`
without `[[NO]]` is yes, the mirror case no; without brackets, a lone YES or NO word; anything else
is `invalid`. With `repeats` > 1 the decision is the majority of the valid verdicts (a tie is no);
with none valid it is `unparsable` and scores 0. Every verdict, with the judge's raw text, goes into
the score's details under a key that hashes the judge's settings and prompt, so rescoring reuses it.

`JudgeScorer(config)` judges whole answers; `RuleThenJudge(rule, judge)` (cascade.py) is the
cascade max(rule, judge).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.backends import EngineConfig, check_engine, make_backend
from harness.backends.remote_code import refuse_code_settings
from harness.core.io.read import CONFIG_BYTES, Missing, read_text
from harness.core.settings import check, setting
from harness.core.types import Request, Score
from harness.scoring.rules import Gold, no_answer, parse_gold

SPELL_V1 = """## TASK
I need your help in evaluating an answer provided by an LLM against a ground truth answer. Your task is to determine if the ground truth answer is present in the LLM's response. Please analyze the provided data and make a decision.
## Instruction
1. Carefully compare the "Predicted Answer" with the "Ground Truth Answer".
2. Consider the substance of the answers - look for equivalent information or correct answers. Do not focus on exact wording unless the exact wording is crucial to the meaning.
3. Your final decision should be based on whether the meaning and the vital facts of the "Ground Truth Answer" are present in the "Predicted Answer".
4. Your decision must be one of the "[[YES]]" or "[[NO]]".
## Input Data
- Question: {question}
- Predicted Answer: {prediction}
- Ground Truth Answer: {gold}
## Output Format
Provide your final evaluation in the following format:
"Explanation:" "How you made the decision"
"Decision:" "[[YES]]" or "[[NO]]"
Please proceed with the evaluation."""  # noqa: E501 - the prompt's own lines

PROMPTS = {"spell-v1": SPELL_V1}
FIELD = re.compile(r"\{(question|prediction|gold)\}")
RAW_KEPT = 4000  # characters of each raw judge reply kept in the details
JUDGE_FLAG = re.compile(r"--(?!judge-)(?=[a-z])")  # an engine option, as the judge's CLI spells it


IDENTITY = ("model", "backend", "prompt", "repeats", "temperature", "max_tokens", "dtype")  # identity()'s


@dataclass(frozen=True)
class JudgeConfig:
    """Who judges and how. The engine runs the judge model (its own backend, dtype, parallelism);
    the model, backend, prompt and decoding are part of a run's identity, the rest is not."""

    engine: EngineConfig = setting(cli=False)  # the judge model and the engine that serves it
    prompt: str = setting("spell-v1", "spell-v1, or a template file with {question}, {prediction}, {gold}.")
    repeats: int = setting(1, "Verdicts per answer; the majority decides.", minimum=1)
    temperature: float = setting(0.0, "The judge's sampling temperature.", minimum=0)
    max_tokens: int = setting(8192, "The judge's completion token budget.", minimum=1)

    def __post_init__(self) -> None:
        check(type(self), vars(self), name=lambda field: f"--judge-{field.replace('_', '-')}")

    @classmethod
    def from_settings(cls, settings: dict[str, Any]) -> JudgeConfig:
        """From flat settings (model, backend, base_url, prompt...), as run.json and train configs keep.
        A judge never runs a model's own code: settings that would (`trust_remote_code`...) are refused."""
        refuse_code_settings(settings, "judge settings", "a judge never runs a model's own code")
        engine_keys = {f.name for f in fields(EngineConfig)}
        engine = {k: v for k, v in settings.items() if k in engine_keys}
        try:
            engine_config = EngineConfig(**{"backend": "openai", **engine})
        except HarnessError as e:
            raise HarnessError(JUDGE_FLAG.sub("--judge-", str(e))) from None
        return cls(engine_config, **{k: v for k, v in settings.items() if k not in engine_keys})

    @property
    def model(self) -> str:
        return self.engine.model

    def identity(self) -> dict:
        """What makes two judges the same judge; a dtype only when one is chosen (older runs keep theirs)."""
        identity = {
            "model": self.engine.model,
            "backend": self.engine.backend,
            "prompt": self.prompt,
            "repeats": self.repeats,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "prompt_sha256": self.prompt_sha,
        }
        return identity | ({"dtype": self.engine.dtype} if self.engine.dtype != "auto" else {})

    @property
    def template(self) -> str:
        if self.prompt in PROMPTS:
            return PROMPTS[self.prompt]
        path = Path(self.prompt)
        try:
            text = read_text(path, limit=CONFIG_BYTES)
        except Missing:
            raise HarnessError(
                f"--judge-prompt {self.prompt!r} is neither {sorted(PROMPTS)} nor a file"
            ) from None
        missing = [f for f in ("{question}", "{prediction}", "{gold}") if f not in text]
        if missing:
            raise HarnessError(f"judge prompt {path} lacks {', '.join(missing)}")
        return text

    @property
    def prompt_sha(self) -> str:
        return hashlib.sha256(self.template.encode()).hexdigest()


def check_judge_engine(config: JudgeConfig) -> None:
    """Refuse the judge's engine settings now, not after generating; errors name the --judge-... flags."""
    try:
        check_engine(config.engine)
    except HarnessError as e:
        raise HarnessError(f"judge: {JUDGE_FLAG.sub('--judge-', str(e))}") from None


def parse_verdict(text: str) -> str:
    """yes, no or invalid, from the text after the last </think>."""
    text = text.rpartition("</think>")[2]
    yes, no = "[[YES]]" in text, "[[NO]]" in text
    if yes != no:
        return "yes" if yes else "no"
    if yes and no:
        return "invalid"
    words = set(re.findall(r"\b(YES|NO)\b", text))
    return {frozenset({"YES"}): "yes", frozenset({"NO"}): "no"}.get(frozenset(words), "invalid")


def decide(verdicts: Sequence[str]) -> str:
    """Majority of the valid verdicts (a tie is no); unparsable when none is valid."""
    yes, no = verdicts.count("yes"), verdicts.count("no")
    if yes + no == 0:
        return "unparsable"
    return "yes" if yes > no else "no"


class JudgeScorer:
    """LLM judge scores of whole answers; the judge's engine starts on first need.

    `verdicts` judges given predictions, for scorers that choose what the judge is shown (the
    max(rule, judge) cascade in cascade.py shows it a rule's extracted answer)."""

    name = "judge"

    def __init__(self, config: JudgeConfig):
        self.config = config
        self.template = config.template

    @property
    def version(self) -> str:
        c = self.config
        judge = f"judge-{Path(c.prompt).name if c.prompt not in PROMPTS else c.prompt}-{c.prompt_sha[:8]}"
        return judge + f"+{c.model}+r{c.repeats}+t{c.temperature:g}+m{c.max_tokens}"

    def score(
        self,
        answers: Sequence[str | None],
        golds: Sequence[str],
        previous: Sequence[dict | None] | None = None,
    ) -> Iterator[tuple[int, Score]]:
        previous = previous or [None] * len(answers)
        asks: list[tuple[int, str, Gold, dict | None]] = []
        for i, (answer, gold) in enumerate(zip(answers, golds, strict=True)):
            missing = no_answer(answer)
            if missing is not None:
                yield i, missing
                continue
            asks.append((i, answer, parse_gold(gold), previous[i]))
        predictions = {i: prediction for i, prediction, _, _ in asks}
        for i, judged in self.verdicts(asks):
            yield (
                i,
                Score(1.0 if judged["decision"] == "yes" else 0.0, predictions[i], None, {"judge": judged}),
            )

    def verdicts(self, asks: Iterable[tuple[int, str, Gold, dict | None]]) -> Iterator[tuple[int, dict]]:
        """The judge's verdicts on (index, prediction, gold, the sample's earlier score details):
        yields (index, verdicts) reused from the earlier details when the judge and prompt are the
        same, then asks the judge for the rest (once per distinct prompt)."""
        waiting: dict[str, tuple[str, list[int]]] = {}  # key: prompt, indexes
        for i, prediction, gold, earlier_details in asks:
            values = {
                "question": gold.question or "",
                "prediction": prediction,
                "gold": " / ".join(gold.answers),
            }
            prompt = FIELD.sub(lambda m, values=values: values[m.group(1)], self.template)
            key = self._key(prompt)
            earlier = (earlier_details or {}).get("judge")
            if isinstance(earlier, dict) and earlier.get("key") == key:
                yield i, earlier
                continue
            waiting.setdefault(key, (prompt, []))[1].append(i)
        if waiting:
            yield from self._ask(waiting)

    def close(self) -> None:
        pass  # each batch of questions starts and closes the judge's engine

    def _key(self, prompt: str) -> str:
        return hashlib.sha256(repr((sorted(self.config.identity().items()), prompt)).encode()).hexdigest()

    def _ask(self, waiting: dict[str, tuple[str, list[int]]]) -> Iterator[tuple[int, dict]]:
        c = self.config
        requests = [
            Request(
                "judge",
                key,
                r,
                ({"role": "user", "content": prompt},),
                int(key[:15], 16) + r,
                c.temperature,
                1.0,
                c.max_tokens,
            )
            for key, (prompt, _) in waiting.items()
            for r in range(c.repeats)
        ]
        replies: dict[str, list[str | None]] = {key: [None] * c.repeats for key in waiting}
        backend = self._backend()
        try:
            for batch in backend.generate(requests):
                for completion in batch:
                    key = completion.request.item_id
                    replies[key][completion.request.sample_idx] = completion.text
                    if all(text is not None for text in replies[key]):
                        texts = [t or "" for t in replies[key]]
                        verdicts = [parse_verdict(t) for t in texts]
                        judged = {
                            "key": key,
                            "verdicts": verdicts,
                            "decision": decide(verdicts),
                            "raw": [t[-RAW_KEPT:] for t in texts],
                        }
                        for i in waiting[key][1]:
                            yield i, judged
        finally:
            backend.close()

    def _backend(self):
        """The judge's own engine."""
        check_judge_engine(self.config)
        return make_backend(self.config.engine)
