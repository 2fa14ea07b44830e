"""The history memory (SPELL paper, §4.1): per (task, cluster), the last L solvable questions with the
documents they were asked from; their documents join the questioner's next context and the questions
are shown as examples to surpass."""

from __future__ import annotations

import random
from collections import deque
from dataclasses import asdict, dataclass
from typing import Any

PUSH_RULES = ("paper", "code")


@dataclass(frozen=True)
class Entry:
    documents: tuple[int, ...]  # indices into the cluster's documents, sorted
    question: str  # as the examples show it (a multiple-choice question with its choices)
    answer: str


class HistoryMemory:
    """`size` entries per (task, cluster), oldest evicted first; size 0 turns the memory off."""

    def __init__(self, size: int, push_rule: str = "paper"):
        if push_rule not in PUSH_RULES:
            raise ValueError(f"memory push rule {push_rule!r} is not one of {PUSH_RULES}")
        self.size, self.push_rule = size, push_rule
        self._entries: dict[tuple[str, str], deque[Entry]] = {}

    def entries(self, task: str, cluster: str) -> list[Entry]:
        return list(self._entries.get((task, cluster), ()))

    def solvable(self, mean: float) -> bool:
        """Alg. 1 l.19 pushes when 0 < mean < 1; the released code when 0.01 <= mean <= 1."""
        return 0.0 < mean < 1.0 if self.push_rule == "paper" else 0.01 <= mean <= 1.0

    def push(self, task: str, cluster: str, entry: Entry) -> None:
        if self.size:
            self._entries.setdefault((task, cluster), deque(maxlen=self.size)).append(entry)

    def __len__(self) -> int:
        return sum(len(d) for d in self._entries.values())

    def state_dict(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "push_rule": self.push_rule,
            "entries": [
                [task, cluster, [asdict(e) for e in d]] for (task, cluster), d in self._entries.items()
            ],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if (state["size"], state["push_rule"]) != (self.size, self.push_rule):
            raise ValueError(
                f"the checkpoint's memory is size {state['size']} ({state['push_rule']} rule), this run's "
                f"{self.size} ({self.push_rule})"
            )
        self._entries = {
            (task, cluster): deque(
                (Entry(tuple(e["documents"]), e["question"], e["answer"]) for e in entries), maxlen=self.size
            )
            for task, cluster, entries in state["entries"]
        }


def questioner_documents(n_documents: int, memory: list[Entry], m: int, rng: random.Random) -> list[int]:
    """The memory's documents plus `m` new ones drawn from the rest of the cluster (fewer when fewer are
    left), sorted by their place in the cluster."""
    remembered = {i for entry in memory for i in entry.documents}
    fresh = [i for i in range(n_documents) if i not in remembered]
    return sorted(remembered | set(rng.sample(fresh, min(m, len(fresh)))))
