"""The README and the documentation site (docs/) against the code: the commands they show and the metric
names they define (the conventions are in docs/architecture.md, "The documentation").

- A fenced bash block after a `<!-- runnable -->` line is run: each command must be cheap (`--help`,
  `list`, `--dry-run`, `tiny-model`) and exit 0.
- The README's blocks after a `<!-- tour -->` line run as one script, in order, in a copy of the
  repository's files with nothing beside it (a fresh clone: no ../shared), offline: in
  tests/test_readme_tour.py, which takes minutes (these checks take seconds).
- Every `harness` command in any bash block is parsed by the real command line (nothing runs): an
  unknown command or option fails.
- Every metric name the pages mention is one the code logs, and every one the code logs (and every
  results.json key) is defined on a page.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer
from helpers import own_names

from harness.cli import app
from trainers.names import method_names

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
RUNNABLE = "<!-- runnable -->"
TOUR = "<!-- tour -->"  # the README's tour: its blocks run as one script from a fresh clone
CHEAP_COMMANDS = {"list", "tiny-model"}  # besides any command with --help or --dry-run
TIMEOUT = 120  # seconds per runnable command


@dataclass(frozen=True)
class Command:
    page: str
    line: int
    runnable: bool
    args: tuple[str, ...]  # after `harness`

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: harness {' '.join(self.args)}"


def bash_blocks(text: str) -> list[tuple[int, bool, list[str]]]:
    """(line of the opening fence, marked runnable, the block's lines) of each ```bash block."""
    blocks, lines = [], text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```bash":
            before = next((x.strip() for x in reversed(lines[:i]) if x.strip()), "")
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
            blocks.append((i + 1, before == RUNNABLE, lines[i + 1 : end]))
            i = end
        i += 1
    return blocks


SEPARATORS = re.compile(r"\s(?:&&|\|\||\||&)\s|;\s|;$|\s&$")
SHELL_WORDS = {"do", "then", "else", "time", "!"}


def harness_args(logical_line: str) -> list[tuple[str, ...]]:
    """The arguments of each `harness` (or `-m harness`) command on one logical shell line."""
    found = []
    for segment in SEPARATORS.split(logical_line):
        try:
            tokens = shlex.split(segment, comments=True)
        except ValueError:
            tokens = segment.split()
        while tokens and tokens[0] in SHELL_WORDS:
            tokens = tokens[1:]
        # an optional option shown in brackets ("[--alpha 0.05]") is still an option to check
        tokens = [t.removeprefix("[").removesuffix("]") for t in tokens]
        if tokens[:1] == ["harness"]:
            found.append(tuple(tokens[1:]))
        elif "harness" in tokens and tokens[tokens.index("harness") - 1] == "-m":
            found.append(tuple(tokens[tokens.index("harness") + 1 :]))
    return found


def commands() -> list[Command]:
    found = []
    for page in PAGES:
        name = str(page.relative_to(REPO))
        for start, runnable, block in bash_blocks(page.read_text()):
            logical, first = "", None
            for offset, line in enumerate(block, start=1):
                first = first or start + offset
                if line.rstrip().endswith("\\"):
                    logical += line.rstrip()[:-1] + " "
                    continue
                for args in harness_args(logical + line):
                    found.append(Command(name, first, runnable, args))
                logical, first = "", None
    return found


def parse(command, path: list[str], rest: list[str]) -> None:
    """Parse `rest` as the options and arguments of `command`, as the command line does, but with no
    conversion or callback (placeholders such as `--n N` pass): an unknown option raises."""
    context = command.context_class(command, info_name=" ".join(["harness", *path]))
    command.make_parser(context).parse_args(rest)


def resolve(args: tuple[str, ...]):
    """The click command `args` name, and the arguments left for it; a KeyError names an unknown one."""
    command, path, rest = typer.main.get_command(app), [], list(args)
    while hasattr(command, "commands"):
        positional = next((i for i, a in enumerate(rest) if not a.startswith("-")), None)
        if positional is None:  # `harness --help`, `harness corpus --help`
            return command, path, rest
        name = rest.pop(positional)
        if name not in command.commands:
            raise KeyError(f"unknown command {' '.join([*path, name])!r}")
        command, path = command.commands[name], [*path, name]
    return command, path, rest


ALL_COMMANDS = commands()


def test_the_pages_show_commands_and_some_are_runnable():
    assert len(ALL_COMMANDS) > 40
    assert {c.page for c in ALL_COMMANDS if c.runnable} >= {"docs/install.md"}
    assert (REPO / "README.md").read_text().count(f"{TOUR}\n```bash") >= 3  # tests/test_readme_tour.py


@pytest.mark.parametrize("command", ALL_COMMANDS, ids=str)
def test_every_documented_command_parses(command):
    """Parsed as the command line parses it, without running: options and commands must exist."""
    try:
        parse(*resolve(command.args))
    except Exception as e:  # typer's own click raises its UsageError subclasses
        pytest.fail(f"{command}: {e}")


def cheap(args: tuple[str, ...]) -> bool:
    _, path, _ = resolve(args)
    return "--help" in args or "--dry-run" in args or (len(path) == 1 and path[0] in CHEAP_COMMANDS)


RUNNABLE_COMMANDS = sorted({c.args: c for c in ALL_COMMANDS if c.runnable}.values(), key=str)


@pytest.mark.slow  # seconds each: `tox -e unit` leaves it to the full tier
@pytest.mark.parametrize("command", RUNNABLE_COMMANDS, ids=str)
def test_runnable_commands_are_cheap_and_succeed(command, tmp_path):
    assert cheap(command.args), f"{command}: only cheap commands may be marked runnable"
    args = [a.replace("/tmp/", f"{tmp_path}/") for a in command.args]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stderr[-2000:]}"


def test_a_renamed_option_or_command_is_caught():
    """The checks above fail on what a rename leaves behind (and pass on what exists)."""
    lines = "harness train spell --dry-run --config c.yaml; harness eval --model M --n 4 \\\n --bogus 1"
    (first, second) = harness_args(lines.replace("\\\n", ""))
    _, path, rest = resolve(first)
    assert path == ["train"] and cheap(first)
    with pytest.raises(Exception, match="--bogus"):
        parse(*resolve(second))
    parse(*resolve(second[:-2]))
    with pytest.raises(KeyError, match="evaluate"):
        resolve(("evaluate", "--model", "M"))
    assert not cheap(second)
    block = f"x\n\n{RUNNABLE}\n```bash\nharness list\n```\n```bash\nharness eval --n 2\n```\n"
    assert [(runnable, lines) for _, runnable, lines in bash_blocks(block)] == [
        (True, ["harness list"]),
        (False, ["harness eval --n 2"]),
    ]
    assert harness_args("accelerate launch --num_processes 4 -m harness train azr --out o &") == [
        ("train", "azr", "--out", "o")
    ]


# --- metric names ------------------------------------------------------------------------------------

WILD = "*"
METRIC = re.compile(r"[a-z][a-z0-9_]*(/[a-z0-9_*]+)+/?")  # in the code
NAME = re.compile(r"[a-z0-9_*]+(/[a-z0-9_*]+)+")  # in the pages, placeholders expanded


def string_patterns(source: str) -> set[str]:
    """Metric-like strings of a Python source: literals, and f-strings with each field as `*`; a literal
    ending in "/" (a prefix a name is appended to) gets a `*` after it."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else WILD for v in node.values)
        else:
            continue
        if METRIC.fullmatch(text):
            found.add(text + WILD if text.endswith("/") else text)
    return found


def logged_by_trainers() -> set[str]:
    """What `trainers/` logs: its metric-like strings in the namespaces of the methods and the trainer
    core, and for each `NAME/seconds/STAGE` the `NAME/share_of_step/STAGE` the trainer adds."""
    patterns = set()
    core = set()
    for path in (REPO / "trainers").rglob("*.py"):
        found = string_patterns(path.read_text())
        patterns |= found
        if path.name in ("trainer.py", "callbacks.py"):
            core |= {p.split("/")[0] for p in found}
    namespaces = set(method_names()) | core - {WILD}
    patterns = {p for p in patterns if p.split("/")[0] in namespaces}
    return patterns | {p.replace("/seconds/", "/share_of_step/") for p in patterns if "/seconds/" in p}


def logged_by_trl() -> set[str]:
    """TRL's GRPOTrainer's own metric names (clip ratios, completion lengths...), which our trainer keeps."""
    spec = importlib.util.find_spec("trl.trainer.grpo_trainer")
    assert spec is not None and spec.origin is not None
    return {p for p in string_patterns(Path(spec.origin).read_text()) if "/" in p}


def expand(name: str) -> list[str]:
    """`rewards/{a,b}/mean` -> rewards/a/mean, rewards/b/mean; `<task>`, `STAGE` and `...` -> `*`."""
    match = re.search(r"\{([^{}]*)\}", name)
    if match:
        return [
            n
            for part in match.group(1).split(",")
            for n in expand(name[: match.start()] + part + name[match.end() :])
        ]
    return [re.sub(r"<[^<>/]+>|\b[A-Z][A-Z_]*\b|\.\.\.", WILD, name)]


def documented_names(namespaces: set[str]) -> dict[str, str]:
    """Each metric name in an inline code span of the pages -> the page naming it."""
    names = {}
    for page in PAGES:
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)  # inline code only
        for span in re.findall(r"`([^`]+)`", text):
            compact = re.sub(r"\s+", "", span) if "{" in span else span
            if " " in compact or "/" not in compact:
                continue
            for name in expand(compact):  # `NAME/share_of_step/STAGE`: every method's
                if NAME.fullmatch(name) and name.split("/")[0] in namespaces | {WILD}:
                    names[name] = str(page.relative_to(REPO))
    return names


def matches(name: str, pattern: str) -> bool:
    a, b = name.split("/"), pattern.split("/")
    return len(a) == len(b) and all(x == y or WILD in (x, y) for x, y in zip(a, b, strict=True))


def test_every_metric_name_in_the_docs_is_logged_by_the_code():
    ours, trl = logged_by_trainers(), logged_by_trl()
    assert {"spell/verifier/rule_disagreement", "rewards/*/mean", "spae/share_of_step/*"} <= ours
    namespaces = {p.split("/")[0] for p in ours | trl}
    documented = documented_names(namespaces)
    assert "spell/verifier/rule_disagreement" in documented and "ulorl/staleness/max" in documented
    unknown = sorted(
        f"{page}: {n}" for n, page in documented.items() if not any(matches(n, p) for p in ours | trl)
    )
    assert not unknown, "metric names the code does not log:\n" + "\n".join(unknown)


def test_every_metric_the_code_logs_is_documented():
    ours = logged_by_trainers()
    documented = documented_names({p.split("/")[0] for p in ours})
    undocumented = sorted(p for p in ours if not any(matches(n, p) for n in documented))
    assert not undocumented, "metrics logged but defined on no page:\n" + "\n".join(undocumented)


def test_every_results_json_key_is_defined_on_the_run_directory_page(tmp_path):
    from helpers import answered_run

    run = answered_run(tmp_path / "run", ["4", "5", None, "4"], ["4", "5", "6", "7"])
    keys = set(json.loads((run / "results.json").read_text())["sums"])
    general = {re.sub(r"@\d+$", "@N", k) for k in keys}  # avg@1 -> avg@N; pass@K, maj@N alike
    page = (REPO / "docs" / "run-directory.md").read_text()
    defined = set(re.findall(r"`([^`\s]+)`", page)) | {"pass@N"}  # pass@K covers K = N
    assert {"avg@N", "maj@N", "ci95", "mode_answer_share"} <= general
    assert not general - defined, f"results.json keys not defined on the page: {sorted(general - defined)}"


def test_a_misspelt_metric_is_caught_and_placeholders_expand():
    ours = logged_by_trainers()
    assert not any(matches("spell/verifier/rule_disagreements", p) for p in ours)
    assert expand("rewards/{questioner,responder}/mean") == [
        "rewards/questioner/mean",
        "rewards/responder/mean",
    ]
    assert expand("spell/solvable/<task>") == ["spell/solvable/*"] and expand("X/seconds/STAGE") == [
        "*/seconds/*"
    ]


# --- the methods' option tables (scripts/mkdocs_options.py, a hook of the docs build) -------------------


@pytest.mark.parametrize("method", [m for m in own_names("harness.methods") if m != "grpo"])
def test_each_method_page_has_the_table_of_every_option_with_its_default(method):
    import dataclasses

    from trainers.methods import METHODS

    spec = importlib.util.spec_from_file_location("mkdocs_options", REPO / "scripts" / "mkdocs_options.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = (REPO / "docs" / "methods" / f"{method}.md").read_text()
    assert f"<!-- options: {method} -->" in page
    assert hook.options_class(method) is METHODS[method].options_class  # the class the method reads
    rows = {row["name"]: row for row in hook.rows(method)}
    options = METHODS[method].options_class()  # the defaults
    assert list(rows) == [f.name for f in dataclasses.fields(options)]
    for name, row in rows.items():
        assert row["meaning"], f"options.{name} of {method} has no help"
        value = getattr(options, name)
        if isinstance(value, float):
            assert float(row["default"]) == pytest.approx(value, rel=1e-5), name
        else:
            assert ast.literal_eval(row["default"]) == value, name
        allowed = {f.name: f.metadata["choices"] for f in dataclasses.fields(options)}[name]
        if allowed:
            assert row["allowed"] == ", ".join(f"`{c}`" for c in allowed)
    rendered = hook.on_page_markdown(page)
    assert "<!-- options:" not in rendered and f"| `{next(iter(rows))}` |" in rendered


def test_the_training_page_has_the_table_of_every_config_key_with_its_default_and_choices():
    import dataclasses

    from trainers.config import LOSS_TYPES, TrainConfig

    spec = importlib.util.spec_from_file_location("mkdocs_options", REPO / "scripts" / "mkdocs_options.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = (REPO / "docs" / "training" / "index.md").read_text()
    assert "<!-- options: train -->" in page
    rows = {row["name"]: row for row in hook.rows("train")}
    assert list(rows) == [f.name for f in dataclasses.fields(TrainConfig)]
    assert all(row["meaning"] for row in rows.values()), [n for n, r in rows.items() if not r["meaning"]]
    assert rows["loss_type"]["allowed"] == ", ".join(f"`{c}`" for c in LOSS_TYPES)
    assert (
        rows["max_completion_length"]["default"] == "1024"
        and rows["max_completion_length"]["allowed"] == "≥ 1"
    )
    rendered = hook.on_page_markdown(page)
    assert "<!-- options:" not in rendered and "| `loss_type` | `'grpo'` |" in rendered


# Flags of other programs that the pages mention inline: ruff, pip, mkdocs, bubblewrap, vllm serve,
# accelerate, lm-eval, and the scripts in scripts/ and tests/perf/
OTHER_PROGRAMS_FLAGS = {
    "--check", "--strict", "--no-deps", "--die-with-parent", "--no-enable-chunked-prefill", "--num",
    "--include", "--device", "--short", "--every", "--group-size", "--tasks", "--workers", "--against",
    "--old-questions",
    "--cpu", "--multi",  # accelerate launch's --cpu and --multi_cpu
    "--machine", "--main", "--nnodes", "--nodes", "--ntasks-per-node",  # multi-node launchers and Slurm
}  # fmt: skip


def test_every_option_the_pages_name_inline_exists():
    """`--numeric-rtol` in a sentence is checked as a command line's option would be."""

    def flags(command) -> set[str]:
        own = {o for p in command.params for o in [*p.opts, *p.secondary_opts] if o.startswith("--")}
        return own.union(*(flags(c) for c in getattr(command, "commands", {}).values()))

    known = flags(typer.main.get_command(app)) | {"--help", "--judge-"} | OTHER_PROGRAMS_FLAGS
    unknown = []
    for page in PAGES:
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
        for span in re.findall(r"`([^`]+)`", text):
            named = re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", span)
            unknown += [f"{page.relative_to(REPO)}: {o}" for o in named if o not in known]
    assert not unknown, "options no command has:\n" + "\n".join(sorted(set(unknown)))


def test_the_readme_stays_a_start_page():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 150, "the README is a start page: move the new text into docs/"
    for command in (
        "pip install tox && tox -e eval-aime",
        "pip install tox && tox -e lint,test,vllm,no-bwrap,docs",
    ):
        assert command in readme
    assert "tox -e lint,test,vllm,no-bwrap,docs" in (REPO / ".ci" / "run").read_text()  # the same tests


def test_the_readmes_links_and_pictures_exist():
    """MkDocs checks the site's links; the README is outside it, so its relative targets are checked
    here (a moved page or a renamed screenshot fails)."""
    readme = (REPO / "README.md").read_text()
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    relative = [t for t in targets if "://" not in t]
    assert any(t.endswith(".png") for t in relative)  # the view's screenshots
    missing = [t for t in relative if not (REPO / t).exists()]
    assert not missing, f"README links to missing files: {missing}"


def test_the_site_says_where_it_is_reads_from_disk_and_the_generated_parts_say_so_on_github(tmp_path):
    """`tox -e docs` prints where the site is and how to serve it; pages link to page.html files (a folder
    link opened from disk shows a folder listing); a page whose table is generated when the site is built
    says where that table is when read on GitHub."""
    import configparser

    tox = configparser.ConfigParser(interpolation=None)
    tox.read(REPO / "tox.ini")
    commands = [c.strip() for c in tox["testenv:docs"]["commands"].splitlines() if c.strip()]
    assert commands[0] == "mkdocs build --strict --site-dir {envtmpdir}/site"
    (printing,) = [
        shlex.split(c.replace("{envtmpdir}", str(tmp_path))) for c in commands if c.startswith("python")
    ]
    done = subprocess.run([sys.executable, *printing[1:]], capture_output=True, text=True, check=True)
    assert f"open {tmp_path}/site/index.html from disk" in done.stdout
    assert f"python -m http.server 8000 --directory {tmp_path}/site" in done.stdout
    assert re.search(r"^use_directory_urls: false$", (REPO / "mkdocs.yml").read_text(), flags=re.MULTILINE)
    methods = sorted((REPO / "docs" / "methods").glob("*.md"))
    generated = {page: page.read_text() for page in methods if "\n<!-- options: " in page.read_text()}
    assert len(generated) == 5  # every method but GRPO, which has no options of its own
    for page, text in generated.items():
        before = text.split("\n<!-- options: ")[0].rsplit("\n## ", 1)[1]
        assert "Read on GitHub, where nothing is generated" in " ".join(before.split()), page
    cli = (REPO / "docs" / "cli.md").read_text()
    assert "Read on GitHub this page is empty below" in cli.split("::: mkdocs-click")[0]


def test_the_command_line_reference_builds_without_torch():
    """The docs environment holds typer and rich, not torch: the reference that mkdocs-click generates
    imports harness.cli, which must reach no module that needs torch or transformers at import time."""
    code = "import sys, harness.cli; print(sorted({'torch', 'transformers'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert done.stdout.strip() == "[]"
