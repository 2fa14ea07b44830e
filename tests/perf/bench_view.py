"""`harness view` on a large run: 60 items x 64 samples x 32K-token completions (about 0.5 GB of
generations.jsonl), generated here, synthetic but shaped like a real run.

Measures, in one process:

- baseline: reading the whole run as a page that loads everything would have to (every line of
  generations.jsonl and scores.jsonl parsed, as `RunDir.records` reads them);
- open: `Site` indexing the run (each line parsed once; texts stay on disk), then the first request;
- the data the page loads: the item list with verdict flags (its size) and one sample, by offset;
- in chromium (when Playwright and a chromium are here): the page loaded until the items show, the
  filter to wrong answers, a sample opened until its text shows;
- with --bundle: writing the static bundle and the same steps from file://.

Prints each time and open / baseline.

    python tests/perf/bench_view.py [--items 60] [--samples 64] [--tokens 32768] [--bundle] [--out DIR]
    python tests/perf/bench_view.py --short    # 6 x 8 x 4K: a quick check
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from harness.core.store import GENERATIONS, RESULTS, RUN, SCORES, RunDir  # noqa: E402
from harness.view.bundle import write_bundle  # noqa: E402
from harness.view.server import make_server, url  # noqa: E402
from harness.view.site import Site  # noqa: E402

CHARS_PER_TOKEN = 4
WORDS = "so we have x then the sum of a and b is c therefore $x^2 + 1$ check again wait".split()


def make_run(out: Path, items: int, samples: int, tokens: int) -> int:
    """Write the synthetic run; its generations.jsonl size in bytes."""
    rng = random.Random(0)
    pool = " ".join(rng.choice(WORDS) for _ in range(2 * tokens * CHARS_PER_TOKEN // 4))
    size = tokens * CHARS_PER_TOKEN
    golds = {f"item-{i}": str(i) for i in range(items)}
    info = {"config": {"benchmarks": ["synthetic"], "model": "synthetic", "scorers": {"synthetic": "math"}},
            "config_hash": "synthetic", "answers": {"synthetic": golds}}  # fmt: skip
    out.mkdir(parents=True)
    (out / RUN).write_text(json.dumps(info))
    values = []
    with open(out / GENERATIONS, "w") as gens, open(out / SCORES, "w") as scores:
        for i, item in enumerate(golds):
            for k in range(samples):
                start = rng.randrange(len(pool) - size)
                truncated = rng.random() < 0.2
                right = not truncated and rng.random() < 0.4
                answer = None if truncated else (golds[item] if right else str(i + 1))
                reasoning = pool[start : start + size]
                final = None if truncated else f"The answer is \\boxed{{{answer}}}."
                text = reasoning if truncated else f"{reasoning}\n</think>\n\n{final}"
                gens.write(json.dumps({
                    "benchmark": "synthetic", "item_id": item, "sample_idx": k, "seed": k, "text": text,
                    "reasoning": reasoning, "answer": final,
                    "prompt_tokens": 200, "completion_tokens": tokens, "truncated": truncated,
                    "finish_reason": "length" if truncated else "stop", "unclosed_think": truncated,
                }) + "\n")  # fmt: skip
                scores.write(json.dumps({
                    "benchmark": "synthetic", "item_id": item, "sample_idx": k, "value": float(right),
                    "extracted": answer, "scorer": "math", "details": {},
                }) + "\n")  # fmt: skip
                values.append(float(right))
    mean = sum(values) / len(values)
    (out / RESULTS).write_text(json.dumps({"synthetic": {"n_items": items, f"avg@{samples}": mean}}))
    return (out / GENERATIONS).stat().st_size


def timed(label: str, action, times: dict):
    start = time.perf_counter()
    result = action()
    times[label] = time.perf_counter() - start
    print(f"  {label:44} {times[label]:8.3f} s", flush=True)
    return result


def in_browser(start: str, times: dict, prefix: str) -> None:
    """Open the run's items, filter to wrong answers and open a sample, in chromium."""
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        print("  (no playwright: browser steps skipped)")
        return
    chromium = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)
    if chromium is None:
        print("  (no chromium: browser steps skipped)")
        return
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()

        def load():
            page.goto(start + "#/run/0/b/0")
            page.wait_for_selector("#items tbody tr")

        def wrong():
            before = page.locator("#counts").inner_text()
            page.get_by_role("button", name="wrong", exact=True).click()
            expect(page.locator("#counts")).not_to_have_text(before)  # the page's CSP forbids eval
            print(f"  ({page.locator('#counts').inner_text()})")

        def sample():
            page.locator("#items .chip:not(.dim)").first.click()
            page.wait_for_selector(".sample .thinking")

        timed(f"{prefix}page: items shown", load, times)
        timed(f"{prefix}page: filter to wrong answers", wrong, times)
        timed(f"{prefix}page: open a sample", sample, times)
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=60)
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--tokens", type=int, default=32768)
    parser.add_argument("--short", action="store_true", help="6 items x 8 samples x 4K tokens")
    parser.add_argument("--bundle", action="store_true", help="also write and open the static bundle")
    parser.add_argument("--out", type=Path, help="where to write the run (default: a temporary folder)")
    args = parser.parse_args()
    if args.short:
        args.items, args.samples, args.tokens = 6, 8, 4096
    work = Path(args.out or tempfile.mkdtemp(prefix="bench-view-"))
    run = work / "run"
    try:
        print(f"run: {args.items} items x {args.samples} samples x {args.tokens} tokens")
        times: dict[str, float] = {}
        size = timed(
            "write the synthetic run", lambda: make_run(run, args.items, args.samples, args.tokens), times
        )
        print(f"  generations.jsonl: {size / 1e6:.0f} MB")
        print("baseline (everything parsed, as a page loading the whole run would):")
        timed(
            "parse generations.jsonl + scores.jsonl",
            lambda: [RunDir(run).records(n) for n in (GENERATIONS, SCORES)],
            times,
        )
        print("harness view:")
        site = timed("open: index the run (Site)", lambda: Site([run]), times)
        rows = timed(
            "item list with verdicts (JSON)", lambda: json.dumps(site.get("run/0/bench/0/rows")), times
        )
        print(f"  item list: {len(rows) / 1e3:.0f} kB for {args.items * args.samples} samples")
        timed("one sample (read by offset)", lambda: json.dumps(site.get("run/0/bench/0/sample/1234" if
              args.items * args.samples > 1234 else "run/0/bench/0/sample/1")), times)  # fmt: skip
        server = make_server(site, port=0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        in_browser(url(server), times, "served ")
        server.shutdown()
        if args.bundle:
            count = timed("write the bundle", lambda: write_bundle(Site([run]), work / "bundle"), times)
            print(f"  bundle: {count} files")
            in_browser((work / "bundle" / "index.html").as_uri(), times, "bundle ")
        baseline = times["parse generations.jsonl + scores.jsonl"]
        opened = times["open: index the run (Site)"]
        print(f"open / baseline: {opened / baseline:.2f}")
        first = sum(
            times.get(k, 0) for k in ("served page: items shown", "served page: filter to wrong answers")
        )
        print(f"open + first page + filter: {opened + first:.2f} s (goal: a few seconds)")
    finally:
        if args.out is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
