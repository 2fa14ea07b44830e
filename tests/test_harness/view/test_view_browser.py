"""`harness view` in a real browser: Debian's chromium driven by Playwright, on run folders the harness
wrote (an evaluation, its candidate, a `score --generations` run, a training folder with evaluations),
served and as a bundle opened from disk.

HARNESS_VIEW_SCREENSHOTS=DIR saves each page's screenshot in DIR (the README's come from docs/img).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest
from view_runs import base_run, candidate_run, generations_run, training_run

from harness.view.bundle import write_bundle
from harness.view.server import make_server, url
from harness.view.site import Site

pytestmark = pytest.mark.slow  # a browser per test: `tox -e unit` leaves them to the full tier

SHOTS = os.environ.get("HARNESS_VIEW_SCREENSHOTS")
BASE, CANDIDATE, GENERATIONS, TRAIN = 0, 1, 2, 3  # positions in the site; the training run's evals follow


def chromium() -> str | None:
    for name in (os.environ.get("HARNESS_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("view")
    base, candidate = base_run(tmp / "base"), candidate_run(tmp / "candidate")
    return [
        base,
        candidate,
        generations_run(tmp / "elsewhere", tmp),
        training_run(tmp / "train", base, candidate),
    ]


@pytest.fixture(scope="module")
def site_url(runs):
    server = make_server(Site(runs), port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield url(server)
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    required = os.environ.get("HARNESS_REQUIRE_BROWSER")  # CI: .ci/run installs chromium, tox playwright
    try:
        from playwright import sync_api
    except ImportError:
        (pytest.fail if required else pytest.skip)("no playwright: pip install the test extras")
    executable = chromium()
    if executable is None:
        (pytest.fail if required else pytest.skip)("no chromium on PATH: apt-get install chromium")
    playwright = sync_api.sync_playwright().start()
    # chromium's own sandbox needs user namespaces that root and many containers lack; the pages are ours
    instance = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
    yield instance
    instance.close()
    playwright.stop()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("dialog", lambda d: page.errors.append(f"dialog: {d.message}") or d.dismiss())
    yield page
    context.close()


def expect(locator):
    """Playwright's retrying assertions (imported here: the module loads without playwright)."""
    from playwright.sync_api import expect as retrying

    return retrying(locator)


def shot(page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"view-{name}.png"))


def assert_inert(page) -> None:
    """The hostile completion is on the page as text, and nothing in it ran or became markup."""
    assert page.evaluate("window.pwned") is None, "model text ran as script"
    assert not page.errors, page.errors
    assert page.locator(".sample img, .record img, .sample script, .record script").count() == 0
    hrefs = page.eval_on_selector_all("a[href]", "links => links.map(a => a.getAttribute('href'))")
    assert hrefs and all(not h.lower().startswith("javascript") for h in hrefs), hrefs
    assert page.get_by_text("<script>window.pwned = 1</script>", exact=False).count() > 0


def open_wrong_sample(page, start: str) -> None:
    """From a run's page: its AIME items, filtered to wrong answers, then the first wrong sample."""
    page.goto(start + f"#/run/{BASE}")
    page.get_by_role("link", name="aime24").click()
    page.wait_for_selector("#items tbody tr")
    assert page.locator("#items tbody tr").count() == 6
    page.get_by_role("button", name="wrong", exact=True).click()
    # items 63 and 65 are wrong in both samples, 64 and 62 in one (62: nothing extracted, cut off)
    assert page.locator("#counts").inner_text().startswith("3 of 6 items, 5 samples match")
    rows = page.locator("#items tbody tr")
    assert [rows.nth(i).get_attribute("data-item") for i in range(rows.count())] == ["63", "64", "65"]
    assert page.locator("#items .chip.dim").count() == 1  # 64's right sample is shown, dimmed
    shot(page, "items-wrong")
    rows.first.locator(".chip").first.click()
    page.wait_for_selector(".sample")


def test_eval_run_filter_wrong_and_read_a_sample(page, site_url):
    page.goto(site_url)
    page.get_by_role("link", name="base", exact=True).click()  # waits for the index to load
    page.wait_for_selector(".cards .card")
    text = " ".join(page.locator("main").inner_text().split())
    assert "avg@2 [95% CI] 58.3 [16.7, 91.7]" in text  # results.json's own numbers
    assert "scripted/base" in text and "math-4+math-verify" in text and "temperature" in text
    shot(page, "run")

    open_wrong_sample(page, site_url)
    sample = page.locator(".sample")
    assert page.locator("h1").inner_text() == "Item 63, sample 0"
    assert sample.locator(".badge.wrong").count() == 1
    assert sample.locator(".extracted").inner_text().startswith("386")
    assert sample.locator(".gold").inner_text().startswith("385")
    assert sample.locator(".turn .role").first.inner_text().lower() == "user"  # the prompt, rebuilt
    assert sample.locator(".turn .katex").count() > 0  # the problem's math, rendered
    assert "The answer is" in sample.locator(".answer").inner_text()
    assert sample.locator(".thinking .katex").count() > 0
    shot(page, "sample")
    assert_inert(page)

    page.goto(site_url + f"#/run/{BASE}/b/0")
    page.get_by_role("button", name="no answer").click()
    assert page.locator("#counts").inner_text().startswith("1 of 6 items, 1 samples match")
    page.locator("input[type=search]").fill("\\frac{m}{n}")  # search runs over the problems too
    assert page.locator("#counts").inner_text().startswith("0 of 6 items")


def test_code_sample_is_highlighted_with_its_failing_test(page, site_url):
    page.goto(site_url + f"#/run/{BASE}/b/1")
    page.wait_for_selector("#items tbody tr")
    page.locator("#items tbody tr[data-item='HumanEval/1'] .chip").first.click()
    page.wait_for_selector(".sample")
    assert page.locator(".answer pre code.hljs").count() == 1  # highlight.js ran on the program
    details = page.locator(".details").inner_text()
    assert "fail" in details and "AssertionError" in details  # the sandbox's verdict and the failing assert
    shot(page, "code")


def test_two_runs_side_by_side(page, site_url):
    page.goto(site_url)
    page.select_option("#base", str(BASE))
    page.select_option("#candidate", str(CANDIDATE))
    page.click("#compare")
    page.wait_for_selector("#verdict")
    assert "no significant regression (exit 0)" in page.locator("#verdict").inner_text()
    assert "paired sign-flip" in page.locator("main").inner_text()
    aime = page.locator(".flips").first
    assert aime.locator(".right_to_wrong li").all_inner_texts()[0].startswith("item 60")
    assert aime.locator(".wrong_to_right li").all_inner_texts()[0].startswith("item 63")
    shot(page, "compare")
    aime.locator(".wrong_to_right a").first.click()
    page.wait_for_selector(".pair .sample")
    assert (
        page.locator(".side-base .badge.wrong").count() == 1
        and page.locator(".side-candidate .badge.correct").count() == 1
    )
    assert page.locator(".side-candidate .extracted").inner_text().startswith("385")
    page.locator(".side-candidate .chip").nth(1).click()  # the candidate's other sample of the item
    page.get_by_role("heading", name="Candidate: candidate, sample 1").wait_for()
    shot(page, "side-by-side")
    assert_inert(page)  # item 63's base sample carries the hostile text


def test_training_run_step_by_step(page, site_url):
    page.goto(site_url + f"#/run/{TRAIN}")
    page.wait_for_selector("#charts svg")
    assert page.locator("#charts svg").count() == 3  # reward, loss and mean length: the preferred keys
    assert page.locator("#charts svg[data-key=reward] circle").count() == 2
    evals = page.locator("table.evals").inner_text()
    assert "step-0" in evals and "58.3" in evals and "66.7" in evals
    shot(page, "training")
    page.get_by_role("link", name="step 1", exact=True).click()
    page.wait_for_selector(".record")
    roles = [page.locator(".record").nth(i).get_attribute("data-role") for i in range(7)]
    assert roles == [
        "question",
        "propose",
        "solve",
        "routed group",
        "judge replies",
        "released group",
        "group",
    ]
    assert page.locator(".record[data-role=group] svg.spark").count() == 1  # SPAE's potentials
    assert page.locator(".record[data-role=propose] code.hljs").count() >= 1  # AZR's program
    assert_inert(page)  # a SPELL answer carries the hostile text
    page.get_by_role("link", name="routed group").click()
    expect(page.locator(".record")).to_have_count(1)
    assert page.locator(".record").get_attribute("data-role") == "routed group"
    page.get_by_role("link", name="step 2 ›").click()
    expect(page.locator("h1")).to_have_text("train: step 2")
    assert page.locator(".record").count() == 1  # the role filter holds across steps
    shot(page, "training-step")
    page.goto(site_url + f"#/run/{TRAIN}")
    page.get_by_role("link", name="vs step-0").click()
    page.wait_for_selector("#verdict")


def test_generations_run_shows_no_prompt_and_inert_text(page, site_url):
    page.goto(site_url + f"#/run/{GENERATIONS}/b/0/s/1")
    page.wait_for_selector(".sample")
    assert "did not generate its samples" in page.locator("main").inner_text()
    assert_inert(page)


def test_bundle_opens_from_disk(page, runs, tmp_path):
    write_bundle(Site(runs), tmp_path / "bundle")
    start = (tmp_path / "bundle" / "index.html").as_uri()
    open_wrong_sample(page, start)
    assert page.locator(".sample .turn").count() == 1
    assert_inert(page)
    page.goto(start + f"#/compare/{BASE}/{CANDIDATE}")
    page.wait_for_selector("#verdict")
    page.goto(start + f"#/run/{TRAIN}/step/2")
    page.wait_for_selector(".record")
    assert_inert(page)
    shot(page, "bundle")


def test_the_last_sample_offers_no_next_one(page, site_url):
    page.goto(site_url + f"#/run/{BASE}/b/0/s/11")  # aime24: 6 items x 2 samples
    expect(page.locator("h1")).to_have_text("Item 65, sample 1")
    assert page.get_by_role("link", name="‹ previous sample").count() == 1
    assert page.get_by_role("link", name="next sample ›").count() == 0
    page.goto(site_url + f"#/run/{BASE}/b/0/s/10")
    expect(page.get_by_role("link", name="next sample ›")).to_have_count(1)


def test_a_bundle_of_many_evaluations_offers_only_the_comparisons_it_holds(page, runs, tmp_path):
    copies = [shutil.copytree(runs[BASE], tmp_path / f"ck{k}") for k in range(9)]
    write_bundle(Site(copies), tmp_path / "bundle")  # 36 pairs: each vs the first and the next are held
    page.goto((tmp_path / "bundle" / "index.html").as_uri())
    button = page.locator("#compare")
    expect(button).to_be_enabled()  # ck0 vs ck8: against the first
    page.select_option("#base", "2")
    expect(button).to_be_disabled()  # ck2 vs ck8: not in the bundle
    assert "first and the next only" in page.locator("#compare-note").inner_text()
    page.select_option("#candidate", "3")
    expect(button).to_be_enabled()  # neighbours
    button.click()
    page.wait_for_selector("#verdict")


def test_a_step_with_a_300000_number_trace_draws_without_overflowing_the_stack(page, tmp_path):
    """Math.min(...values) passes every value as an argument: a few hundred thousand overflow the stack."""
    out = tmp_path / "train"
    out.mkdir()
    (out / "train.json").write_text(json.dumps({"hash": "0", "config": {"method": "spae", "max_steps": 1}}))
    (out / "metrics.jsonl").write_text(json.dumps({"step": 1, "reward": 0.5}) + "\n")
    trace = [round((i % 997) / 997 - (i == 123_456) * 5, 4) for i in range(300_000)]  # one deep low
    nested: dict = {"leaf": 1}
    for _ in range(40):  # mappings in mappings, past what is drawn as tables
        nested = {"inner": nested}
    record = {"step": 1, "id": "big", "answer": "7", "samples": [{"text": "x", "phi": trace}], "meta": nested}
    (out / "samples.jsonl").write_text(json.dumps(record) + "\n")
    server = make_server(Site([out]), port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page.goto(url(server) + "#/run/0/step/1")
        page.wait_for_selector(".record svg.spark", timeout=60_000)
        assert page.errors == []
        assert "300000 values" in page.locator(".record").inner_text()
        title = page.locator(".record svg.spark title").text_content()
        assert title == f"min {min(trace)}, max {max(trace)} (300000 points along the trace)"
        points = page.locator(".record svg.spark polyline").get_attribute("points").split()
        assert len(points) <= 640 and any(p.endswith(",44") for p in points)  # thinned; the low is kept
        assert '"leaf": 1' in page.locator(".record pre.hv-text").inner_text()
    finally:
        server.shutdown()
        server.server_close()
