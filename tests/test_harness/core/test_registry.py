"""The registry of methods and benchmarks (harness/core/registry.py): every installed package's entry points,
names read without importing anything, and a name two packages register differently refused, so that
installing a package can never quietly replace another's method or benchmark."""

import re
from pathlib import Path

import pytest
from helpers import declared, own_names
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import HarnessError
from harness.core.registry import Registry, registered

GROUP = "harness.test_registry"  # a group of its own: the real ones stay as installed


def install(site: Path, package: str, group: str, points: dict[str, str]) -> None:
    """A distribution's metadata as pip leaves it: NAME-VERSION.dist-info with entry_points.txt."""
    info = site / f"{package}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 1.0\n")
    lines = "".join(f"{name} = {value}\n" for name, value in points.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}")


@pytest.fixture
def site(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    registered.cache_clear()
    yield tmp_path
    registered.cache_clear()


def test_a_name_another_package_registers_is_refused_naming_both(site):
    install(site, "evil", "harness.methods", {"grpo": "evil:Grpo"})
    with pytest.raises(HarnessError, match=r"method 'grpo' is registered twice \(.*\); uninstall one") as e:
        registered("harness.methods", "method")
    assert "harness (trainers.methods.grpo:GRPOMethod)" in str(e.value) and "evil (evil:Grpo)" in str(e.value)


def test_names_are_read_without_importing_and_a_broken_package_is_one_line(site):
    install(site, "broken", GROUP, {"b": "no_such_module_anywhere:Thing", "a": "json:loads"})
    checked = Registry(GROUP, "thing", lambda name, loaded: loaded)
    assert list(checked) == ["a", "b"] and "b" in checked and len(checked) == 2  # nothing imported yet
    import json

    assert checked["a"] is json.loads
    with pytest.raises(HarnessError, match="cannot load thing 'b' from broken .*ModuleNotFoundError"):
        checked["b"]
    with pytest.raises(HarnessError, match="unknown thing 'c'; valid things: a, b"):
        checked.require("c")


def test_an_object_that_is_not_a_method_or_benchmark_is_refused(site):
    install(site, "odd", "harness.methods", {"odd": "json:loads"})
    install(site, "odd2", "harness.benchmarks", {"odd": "json:loads", "aime": "benchmarks.aime:AIME24"})
    from benchmarks import get_benchmark
    from trainers.methods import METHODS

    with pytest.raises(HarnessError, match="method 'odd' is registered as .*not a subclass of Method"):
        METHODS["odd"]
    with pytest.raises(HarnessError, match="benchmark 'odd' is registered as a function, not a Benchmark"):
        get_benchmark("odd")
    with pytest.raises(HarnessError, match="benchmark 'aime' is registered with an object named 'aime24'"):
        get_benchmark("aime")


NAMES = st.sampled_from(["a", "b", "c", "d"])
VALUES = st.sampled_from(["json:loads", "json:dumps", "os:getcwd"])


@settings(max_examples=40, deadline=None)
@given(first=st.dictionaries(NAMES, VALUES, max_size=4), second=st.dictionaries(NAMES, VALUES, max_size=4))
def test_two_packages_register_the_union_unless_they_disagree_on_a_name(tmp_path_factory, first, second):
    site = tmp_path_factory.mktemp("site")
    install(site, "first", GROUP, first)
    install(site, "second", GROUP, second)
    import sys

    sys.path.insert(0, str(site))
    registered.cache_clear()
    try:
        clash = sorted(n for n in set(first) & set(second) if first[n] != second[n])
        if clash:
            with pytest.raises(HarnessError, match="registered twice"):
                registered(GROUP, "thing")
        else:
            found = registered(GROUP, "thing")
            assert list(found) == sorted(set(first) | set(second))
            assert {n: p.value for n, p in found.items()} == {**first, **second}
    finally:
        sys.path.remove(str(site))
        registered.cache_clear()


AZR = "trainers.methods.azr.heldout"


def test_the_projects_own_entries_are_registered_from_it_as_declared():
    """Each name the project's pyproject.toml declares is registered from its own distribution, with the
    object declared (another installed package may add names, never replace these), listed sorted."""
    for group in ("harness.methods", "harness.benchmarks", "harness.scorers", "harness.papers"):
        points = registered(group, "entry")
        assert {name: points[name].value for name in own_names(group)} == declared(group)
        assert {points[name].dist.name for name in own_names(group)} == {"harness"}
        assert list(points) == sorted(points)
    assert sorted(own_names("harness.methods")) == ["arena", "azr", "grpo", "spae", "spell", "ulorl"]
    benchmarks = own_names("harness.benchmarks")
    assert {"aime24", "aime25", "math500", "livecodebench", "cruxeval_o_cot", "2wikimqa"} <= set(benchmarks)
    assert len(benchmarks) == 23
    built_in = {n: f"harness.scoring:{n.upper()}" for n in ("math", "code", "integer", "choice", "cem")}
    built_in |= {"numeric": "harness.scoring:NUMERIC", "judge": "harness.scoring:JUDGE"}
    assert declared("harness.scorers") == {**built_in, "azr_deduction": f"{AZR}:scorer"}


def test_a_registered_scorer_is_a_kind_or_a_callable_under_a_new_name():
    from harness.scoring import Kind, _factory

    def factory(options):
        return options

    assert _factory("mine", factory) == Kind(factory, timed=True)  # a bare factory may run timed code
    declared = Kind(factory, exact_golds=True)
    assert _factory("mine", declared) is declared
    for name, loaded in (("mine+judge", factory), ("mine", "not callable")):
        with pytest.raises(HarnessError, match=re.escape(f"scorer '{name}' is registered as")):
            _factory(name, loaded)


def test_scorer_properties_are_declared_with_the_scorer_not_read_from_its_name():
    from harness.scoring import exact_golds, judged, kind, names, timeless

    assert names() == (
        "azr_deduction", "cem", "choice", "code", "integer", "judge", "math", "numeric",
        "cem+judge", "choice+judge", "math+judge", "numeric+judge",
    )  # fmt: skip
    assert [n for n in names() if judged(n)] == [
        "judge",
        "cem+judge",
        "choice+judge",
        "math+judge",
        "numeric+judge",
    ]
    assert [n for n in names() if not timeless(n)] == ["azr_deduction", "code", "judge", *names()[8:]]
    assert [n for n in names() if exact_golds(n)] == [
        "azr_deduction", "choice", "integer", "math", "numeric", "choice+judge", "math+judge", "numeric+judge"
    ]  # fmt: skip
    assert [n for n in names() if kind(n).reads_question] == ["math"]
    assert [n for n in names() if kind(n).math_text] == ["integer", "math", "math+judge"]
    assert [n for n in names() if kind(n).judge_given] == ["cem", "numeric"]
    assert kind("integer+judge").build is None and kind("code+judge").build is None
    assert timeless("lm-eval:gsm8k") and not exact_golds("lm-eval:gsm8k") and kind("azr_deduction").timed


def _paper(method: str, protocols: dict | None = None, presets: tuple[str, ...] = ("p",)):
    from harness.papers import Layout, PaperProfile, Preset, single

    layout = Layout("Table 1", (single("aime24", "AIME24", "avg@16"),))
    made = {name: Preset(f"{name}'s protocol", ("aime24",), {"n": 16}) for name in presets}
    return PaperProfile(method, "made_up", layout, made, protocols or {})


def test_a_paper_profile_is_checked_when_loaded(site, monkeypatch):
    """A profile is a PaperProfile for the method it is registered under, whose protocols name its own
    presets and its layout's groups; presets are read from every profile, and two papers defining one
    preset name are refused."""
    from harness import papers

    module = site / "made_up_papers.py"
    module.write_text(
        "from test_registry import _paper\n"
        "GOOD = _paper('good')\nOTHER = _paper('other', presets=('q',))\nWRONG = _paper('someone')\n"
        "UNKNOWN = _paper('unknown', {'': ('nope',)})\nGROUPLESS = _paper('groupless', {'16K': ('p',)})\n"
        "TWICE = _paper('twice')\nNOT_ONE = 3\n"
    )
    names = ("good", "other", "wrong", "unknown", "groupless", "twice", "not_one")
    install(site, "made-up", GROUP, {name: f"made_up_papers:{name.upper()}" for name in names})
    registry = Registry(GROUP, "paper", papers._profile)
    assert registry["good"].protocol("") == ("p",)
    for name, message in (
        ("wrong", "registered with a profile for 'someone'"),
        ("unknown", "presets or groups it does not define"),
        ("groupless", "presets or groups it does not define"),
        ("not_one", "not a PaperProfile"),
    ):
        with pytest.raises(HarnessError, match=message):
            registry[name]
    monkeypatch.setattr(papers, "PAPERS", {"good": registry["good"], "other": registry["other"]})
    assert papers.get_preset("q").description == "q's protocol"
    with pytest.raises(HarnessError, match="unknown preset 'r'; available: p, q"):
        papers.get_preset("r")
    monkeypatch.setattr(papers, "PAPERS", {"good": registry["good"], "twice": registry["twice"]})
    with pytest.raises(HarnessError, match="preset 'p' is defined by two papers"):
        papers.presets()


def test_each_paper_profile_is_its_methods_and_its_presets_are_the_cli_s():
    """Every paper is a registered method's, and `--preset` knows exactly the profiles' presets."""
    from harness.papers import PAPERS, presets
    from trainers.methods import METHODS

    assert set(PAPERS) <= set(METHODS)
    assert set(own_names("harness.papers")) == set(own_names("harness.methods")) - {"grpo"}
    assert set(presets()) == {name for paper in PAPERS.values() for name in paper.presets}
    assert {PAPERS[name].paper for name in own_names("harness.papers")} == {
        "spell", "absolute_zero", "reasoning_arena", "ulorl", "spae"
    }  # fmt: skip


def test_each_engine_takes_the_fields_it_declares_under_their_own_names():
    """make_backend passes an engine the EngineConfig fields it declares, as keywords: each is a field
    and a parameter of its constructor, and every constructor parameter but the model is declared."""
    import inspect
    from dataclasses import fields

    from harness.backends import BACKENDS, EngineConfig

    assert list(BACKENDS) == ["hf", "openai", "vllm"]
    config = {f.name for f in fields(EngineConfig)}
    for name in BACKENDS:
        engine = BACKENDS[name]
        parameters = set(inspect.signature(engine).parameters) - {"model"}
        declared = set(engine.ENGINE_FIELDS)
        assert declared <= config, name
        assert declared <= parameters and parameters - declared <= {"max_logprobs", "backoff"}, name


def test_a_registered_backend_is_an_engine_class_named_as_its_entry_point(site):
    from harness.backends import _backend

    module = site / "made_up_engines.py"
    module.write_text(
        "class Good:\n    name = 'good'\n    ENGINE_FIELDS = ('dtype',)\n"
        "class Unknown:\n    name = 'unknown'\n    ENGINE_FIELDS = ('colour',)\n"
        "class Named:\n    name = 'other'\n    ENGINE_FIELDS = ()\n"
    )
    install(
        site,
        "made-up-engines",
        GROUP,
        {n: f"made_up_engines:{n.capitalize()}" for n in ("good", "unknown", "named")},
    )
    registry = Registry(GROUP, "backend", _backend)
    assert registry["good"].ENGINE_FIELDS == ("dtype",)
    with pytest.raises(HarnessError, match="fields EngineConfig lacks: \\['colour'\\]"):
        registry["unknown"]
    with pytest.raises(HarnessError, match="not an engine class named 'named'"):
        registry["named"]
