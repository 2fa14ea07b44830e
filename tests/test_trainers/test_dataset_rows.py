"""A training dataset is asked as `harness eval` asks the same benchmark: its prompt and its system prompt
(Absolute Zero's deduction benchmark has one, the R1 instruction), unless the config sets its own."""

import json

import pytest

from trainers.config import TrainConfig
from trainers.data import dataset_rows
from trainers.methods.azr.prompts import R1_INSTRUCTION
from trainers.studies.programs import FILE, split
from trainers.studies.task import parse_levels


@pytest.fixture
def programs(tmp_path):
    (rows,) = split(parse_levels("2x5"), (3,), 0)
    path = tmp_path / FILE
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return tmp_path


@pytest.mark.parametrize(
    ("system_prompt", "system"),
    [(None, R1_INSTRUCTION), ("Answer briefly.", "Answer briefly."), ("", None)],
)
def test_rows_carry_the_benchmarks_system_prompt_unless_the_config_sets_one(programs, system_prompt, system):
    config = TrainConfig(
        method="grpo", model="m", dataset="azr_deduction", out="o", data_dir=str(programs),
        system_prompt=system_prompt,
    )  # fmt: skip
    rows, scorer = dataset_rows(config)
    assert scorer == "azr_deduction" and len(rows) == 3
    for row in rows:
        roles = [message["role"] for message in row["prompt"]]
        assert roles == (["system", "user"] if system else ["user"])
        if system:
            assert row["prompt"][0]["content"] == system
        assert "def f(x):" in row["prompt"][-1]["content"]
