// harness view: the page. Data comes from the server (fetch api/PATH) or a bundle (script data/PATH.js).
// Model text is untrusted: it reaches the page only through text nodes (el(), textContent), never as
// markup; KaTeX and highlight.js build their own markup from that text.
"use strict";
(function () {
  const MODE = window.HARNESS_MODE || "server";
  const PAGE = 50; // items per page
  const LONG = 20000; // characters above which math in a text is rendered on request only
  const MAX_LISTED = 5000; // values of a number series written out under its sparkline
  const MAX_NEST = 8; // mappings inside mappings drawn as tables; deeper ones as JSON text
  const FLAG_NAMES = { 1: "correct", 2: "wrong", 4: "truncated", 8: "unextracted", 16: "error", 32: "unscored" };
  const FILTERS = [["all", 0], ["correct", 1], ["wrong", 2], ["truncated", 4], ["no answer", 8],
    ["scorer error", 16]];
  const main = document.getElementById("main");
  const crumbs = document.getElementById("crumbs");

  // --- data ---------------------------------------------------------------------------------------
  const cache = new Map();
  const waiting = new Map();
  window.harnessData = function (path, data) {
    const w = waiting.get(path);
    if (w) { waiting.delete(path); w(data); }
  };
  function checked(data) {
    if (data && typeof data === "object" && !Array.isArray(data) && Object.keys(data).length === 1 && "error" in data) {
      throw new Error(data.error);
    }
    return data;
  }
  function load(path) {
    if (cache.has(path)) return cache.get(path);
    let promise;
    if (MODE === "bundle") {
      promise = new Promise((resolve, reject) => {
        waiting.set(path, resolve);
        const script = document.createElement("script");
        script.src = "data/" + path + ".js";
        script.onerror = () => { waiting.delete(path); reject(new Error("not in this bundle: " + path)); };
        script.onload = () => script.remove();
        document.head.appendChild(script);
      }).then(checked);
    } else {
      promise = fetch("api/" + path).then((r) => r.json()).then(checked);
    }
    cache.set(path, promise);
    promise.catch(() => cache.delete(path));
    if (path.includes("/sample/")) { // samples can be large: keep the last few only
      const samples = [...cache.keys()].filter((k) => k.includes("/sample/"));
      samples.slice(0, Math.max(0, samples.length - 30)).forEach((k) => cache.delete(k));
    }
    return promise;
  }

  // --- DOM ----------------------------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    append(node, children);
    return node;
  }
  function append(node, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  function link(href, ...children) { return el("a", { href: href }, ...children); } // hrefs are built here
  function show(...children) { main.replaceChildren(); append(main, children); }
  function trail(...parts) { // [text, href] pairs; the last is the current page
    crumbs.replaceChildren();
    parts.forEach(([text, href], i) => crumbs.appendChild(i < parts.length - 1 ? link(href, text) : el("span", {}, text)));
  }
  function kv(object) {
    const rows = Object.entries(object || {}).map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {}, value(v))));
    return el("table", { class: "kv" }, el("tbody", {}, rows));
  }
  function value(v) {
    if (v === null || v === undefined) return el("span", { class: "muted" }, "–");
    if (typeof v === "object") return el("code", { class: "hv-text" }, JSON.stringify(v, null, 1));
    return String(v);
  }
  function pct(x) { return typeof x === "number" ? (100 * x).toFixed(1) : "–"; }
  function num(x, digits) { return typeof x === "number" ? x.toFixed(digits === undefined ? 3 : digits) : "–"; }
  function fail(error) { show(el("p", { class: "error" }, String(error && error.message || error))); }

  // Text from a model or a dataset: paragraphs as text nodes, ``` fences as highlighted code, math by KaTeX.
  function textBlock(text, options) {
    const opts = Object.assign({ math: true }, options || {});
    const box = el("div", { class: "block" });
    if (text === null || text === undefined || text === "") {
      box.appendChild(el("span", { class: "muted" }, text === "" ? "(empty)" : "(none)"));
      return box;
    }
    text = String(text);
    const fence = /```([\w+-]*)[^\n]*\n([\s\S]*?)(?:```|$)/g;
    let last = 0, match;
    while ((match = fence.exec(text)) !== null) {
      if (match.index > last) box.appendChild(el("div", { class: "hv-text" }, text.slice(last, match.index)));
      const code = el("code", {}, match[2]);
      const lang = match[1].toLowerCase();
      if (window.hljs) {
        if (lang && window.hljs.getLanguage(lang)) code.className = "language-" + lang;
        else if (!lang) code.className = "language-python";
        if (code.className) window.hljs.highlightElement(code);
      }
      box.appendChild(el("pre", {}, code));
      last = fence.lastIndex;
      if (match[0].length === 0) break;
    }
    if (last < text.length) box.appendChild(el("div", { class: "hv-text" }, text.slice(last)));
    if (opts.math && text.length <= LONG) renderMath(box);
    else if (opts.math) {
      const button = el("button", { onclick: () => { renderMath(box); button.remove(); } }, "render math");
      return el("div", {}, button, box);
    }
    return box;
  }
  function renderMath(node) {
    if (!window.renderMathInElement) return;
    window.renderMathInElement(node, {
      delimiters: [
        { left: "$$", right: "$$", display: true }, { left: "\\[", right: "\\]", display: true },
        { left: "\\(", right: "\\)", display: false }, { left: "$", right: "$", display: false },
      ],
      throwOnError: false, trust: false, strict: "ignore", maxExpand: 200,
    });
  }
  function inlineMath(text) {
    const span = el("span", { class: "hv-text" }, text === null || text === undefined ? "–" : String(text));
    if (window.katex && text !== null && text !== undefined && String(text).length < 300 && /[\\^_{]/.test(String(text))) {
      const holder = el("span", {});
      try {
        window.katex.render(String(text), holder, { throwOnError: true, trust: false, strict: "ignore" });
        return el("span", {}, holder, el("span", { class: "muted" }, "  ", span));
      } catch (e) { /* not LaTeX: the text as it is */ }
    }
    return span;
  }
  function answerText(text, code) { // an extracted answer or a gold: math inline, programs and tests as blocks
    if (text !== null && text !== undefined && (String(text).includes("\n") || String(text).length > 300)) {
      return code ? textBlock("```python\n" + text + "\n```", { math: false }) : textBlock(text, { math: false });
    }
    return inlineMath(text);
  }
  function goldView(gold) { // code benchmarks keep their tests as JSON: show the tests as a program
    if (typeof gold === "string" && gold.startsWith("{")) {
      try {
        const parsed = JSON.parse(gold);
        if (parsed && typeof parsed.tests === "string") return textBlock("```python\n" + parsed.tests + "\n```", { math: false });
        if (parsed && parsed.kind === "cruxeval") { // the completed assertion the model had to fill in
          const shown = "assert f(" + parsed.input + ") == " + parsed.output;
          return textBlock("```python\n" + parsed.code + "\n" + shown + "\n```", { math: false });
        }
      } catch (e) { /* not JSON: as text */ }
    }
    return answerText(typeof gold === "string" ? gold : JSON.stringify(gold), false);
  }
  function flagNames(flags) { return Object.keys(FLAG_NAMES).filter((b) => flags & b).map((b) => FLAG_NAMES[b]); }
  function badges(flags) { return flagNames(flags).map((name) => el("span", { class: "badge " + name }, name)); }

  // --- routing ------------------------------------------------------------------------------------
  function route() {
    const [path, query] = (location.hash.replace(/^#\/?/, "") || "").split("?");
    const parts = path.split("/").filter(Boolean);
    const params = new URLSearchParams(query || "");
    const n = parts.map((p) => (/^\d+$/.test(p) ? Number(p) : p));
    window.scrollTo(0, 0);
    let page;
    if (parts.length === 0) page = indexPage();
    else if (n[0] === "run" && parts.length === 2) page = runPage(n[1]);
    else if (n[0] === "run" && n[2] === "b" && parts.length === 4) page = itemsPage(n[1], n[3], params);
    else if (n[0] === "run" && n[2] === "b" && n[4] === "s" && parts.length === 6) page = samplePage(n[1], n[3], n[5]);
    else if (n[0] === "run" && n[2] === "step" && parts.length === 4) page = stepPage(n[1], n[3], params);
    else if (n[0] === "compare" && parts.length === 3) page = comparePage(n[1], n[2]);
    else if (n[0] === "side" && parts.length === 7) page = sidePage(n.slice(1));
    else page = Promise.reject(new Error("no such page: " + path));
    page.catch(fail);
  }
  window.addEventListener("hashchange", route);

  let runs = null;
  async function index() {
    if (!runs) runs = await load("index");
    return runs;
  }
  async function runName(r) { const i = await index(); return i.runs[r] ? i.runs[r].name : "run " + r; }

  // --- pages --------------------------------------------------------------------------------------
  async function indexPage() {
    const i = await index();
    trail(["runs", "#/"]);
    const evals = i.runs.filter((r) => r.kind === "eval");
    const rows = i.runs.map((r) => el("tr", {},
      el("td", {}, link("#/run/" + r.id, r.name)), el("td", {}, r.kind === "train" ? "training" : "evaluation"),
      el("td", { class: "muted" }, r.path)));
    const base = el("select", { id: "base" }, evals.map((r) => el("option", { value: r.id }, r.name)));
    const cand = el("select", { id: "candidate" }, evals.map((r) => el("option", { value: r.id }, r.name)));
    if (evals.length > 1) cand.value = String(evals[evals.length - 1].id);
    // a bundle holds the pairs the index lists (every pair of up to 8 evaluations); a server answers any
    const held = (a, b) => MODE !== "bundle" || i.pairs.some(([x, y]) => x === a && y === b);
    const note = el("span", { class: "muted", id: "compare-note" });
    const check = () => {
      const ok = held(Number(base.value), Number(cand.value));
      button.disabled = !ok;
      note.textContent = ok ? "" : "this bundle holds each evaluation against the first and the next only";
    };
    const button = el("button", { id: "compare", onclick: () => { location.hash = "#/compare/" + base.value + "/" + cand.value; } },
      "compare");
    base.onchange = check; cand.onchange = check;
    const compare = evals.length > 1 ? el("div", { class: "bar" }, "Compare base", base, "with candidate", cand, button, note) : null;
    check();
    show(el("h1", {}, "Runs"), el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "run"), el("th", {}, "kind"),
      el("th", {}, "folder"))), el("tbody", {}, rows)), compare);
  }

  async function runPage(r) {
    const summary = await load("run/" + r);
    if (summary.kind === "train") return trainPage(r, summary);
    const name = await runName(r);
    trail(["runs", "#/"], [name, "#/run/" + r]);
    const cards = summary.benchmarks.map((b) => el("div", { class: "card" },
      el("h2", {}, link("#/run/" + r + "/b/" + b.index, b.name)),
      el("p", { class: "muted" }, b.items + " items, " + b.samples + " samples"),
      metricsTable(b.metrics), el("h3", {}, "Settings"), kv(b.settings)));
    show(el("h1", {}, name), kv(summary.settings), el("div", { class: "cards" }, cards));
  }

  function metricsTable(m) {
    if (!m) return el("p", { class: "muted" }, "not scored yet (no results.json)");
    const avg = Object.keys(m).find((k) => k.startsWith("avg@"));
    const rows = [];
    if (avg) rows.push([avg + " [95% CI]", pct(m[avg]) + (m.ci95 ? "  [" + pct(m.ci95[0]) + ", " + pct(m.ci95[1]) + "]" : "")]);
    Object.keys(m).filter((k) => /^(pass|maj)@/.test(k)).forEach((k) => rows.push([k, pct(m[k])]));
    [["truncated_rate", "truncated"], ["unextracted_rate", "no answer extracted"], ["mode_answer_share", "most common answer's share"],
      ["constant_baseline", "constant-answer baseline"]].forEach(([k, label]) => { if (k in m) rows.push([label, pct(m[k])]); });
    if ("mean_completion_tokens" in m) rows.push(["mean completion tokens", num(m.mean_completion_tokens, 1)]);
    if ("distinct_answers" in m) rows.push(["distinct answers", m.distinct_answers]);
    return el("table", { class: "metrics" }, el("tbody", {}, rows.map(([k, v]) => el("tr", {}, el("td", {}, k),
      el("td", { class: "num" }, v)))));
  }

  const itemState = {};
  async function itemsPage(r, b, params) {
    const [rows, name] = await Promise.all([load("run/" + r + "/bench/" + b + "/rows"), runName(r)]);
    const key = r + "/" + b;
    const state = itemState[key] = itemState[key] || { flag: 0, q: "", groups: {}, page: 0 };
    if (params.has("f")) state.flag = Number(params.get("f")) || 0;
    if (params.has("q")) state.q = params.get("q");
    trail(["runs", "#/"], [name, "#/run/" + r], [rows.benchmark, "#/run/" + r + "/b/" + b]);
    const table = el("div", { id: "items" });
    const counts = el("span", { class: "muted", id: "counts" });
    const buttons = FILTERS.map(([label, bit]) => el("button", { "data-flag": bit, class: state.flag === bit ? "on" : "",
      onclick: () => { state.flag = bit; state.page = 0; buttons.forEach((x) => x.classList.toggle("on", Number(x.dataset.flag) === bit)); draw(); } }, label));
    const search = el("input", { type: "search", placeholder: "search item id, problem, gold, extracted answer", value: state.q,
      oninput: () => { state.q = search.value; state.page = 0; draw(); } });
    const selects = rows.groups.map((field) => {
      const values = [...new Set(rows.items.map((i) => i.groups[field]))].sort();
      const select = el("select", { "data-group": field, onchange: () => { state.groups[field] = select.value; state.page = 0; draw(); } },
        el("option", { value: "" }, field + ": all"), values.map((v) => el("option", { value: v }, v)));
      select.value = state.groups[field] || "";
      return select;
    });
    function matches(sample) { return state.flag === 0 || (sample[2] & state.flag) !== 0; }
    function draw() {
      const q = state.q.trim().toLowerCase();
      const shown = rows.items.filter((item) => {
        for (const [field, v] of Object.entries(state.groups)) if (v && item.groups[field] !== v) return false;
        if (!item.samples.some(matches)) return false;
        if (!q) return true;
        return [item.id, item.gold, item.problem, ...item.samples.map((s) => s[3])]
          .some((t) => t && String(t).toLowerCase().includes(q));
      });
      const samples = shown.reduce((total, item) => total + item.samples.filter(matches).length, 0);
      counts.textContent = shown.length + " of " + rows.items.length + " items, " + samples + " samples match";
      const pages = Math.max(1, Math.ceil(shown.length / PAGE));
      state.page = Math.min(state.page, pages - 1);
      const body = shown.slice(state.page * PAGE, (state.page + 1) * PAGE).map((item) => {
        const right = item.samples.filter((s) => s[2] & 1).length;
        return el("tr", { "data-item": item.id },
          el("td", {}, item.id),
          el("td", {}, item.problem ? problemPreview(item.problem) : ""),
          el("td", {}, item.gold === null ? "–" : item.gold),
          el("td", { class: "num" }, right + "/" + item.samples.length),
          el("td", {}, chips(item.samples, (k) => "#/run/" + r + "/b/" + b + "/s/" + k, matches)));
      });
      const pager = el("div", { class: "bar" },
        el("button", { disabled: state.page === 0 ? "" : null, onclick: () => { state.page--; draw(); } }, "‹ previous"),
        "page " + (state.page + 1) + " of " + pages,
        el("button", { disabled: state.page >= pages - 1 ? "" : null, onclick: () => { state.page++; draw(); } }, "next ›"));
      table.replaceChildren(el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "item"), el("th", {}, "problem"),
        el("th", {}, "gold"), el("th", { class: "num" }, "correct"), el("th", {}, "samples"))), el("tbody", {}, body)), pager);
    }
    show(el("h1", {}, rows.benchmark), el("div", { class: "bar" }, buttons, selects, search), counts, table);
    draw();
  }

  function problemPreview(text) {
    const span = el("span", { class: "muted" }, text);
    renderMath(span);
    return span;
  }

  function chips(samples, href, matches) {
    return el("div", { class: "chips" }, samples.map(([k, idx, flags, extracted]) => {
      const names = flagNames(flags);
      const classes = ["chip", ...names, matches && !matches([k, idx, flags]) ? "dim" : ""].join(" ");
      const title = "sample " + idx + ": " + names.join(", ") + (extracted !== null && extracted !== undefined ? " — answered " + extracted : "");
      return el("a", { class: classes, href: href(k), title: title, "data-sample": k }, String(idx));
    }));
  }

  async function samplePage(r, b, k) {
    const [s, name] = await Promise.all([load("run/" + r + "/bench/" + b + "/sample/" + k), runName(r)]);
    trail(["runs", "#/"], [name, "#/run/" + r], [s.benchmark, "#/run/" + r + "/b/" + b],
      ["item " + s.item_id + " · sample " + s.sample_idx, ""]);
    const nav = el("div", { class: "bar" },
      k > 0 ? link("#/run/" + r + "/b/" + b + "/s/" + (k - 1), "‹ previous sample") : null,
      k + 1 < s.count ? link("#/run/" + r + "/b/" + b + "/s/" + (k + 1), "next sample ›") : null);
    show(nav, el("h1", {}, "Item " + s.item_id + ", sample " + s.sample_idx), sampleView(s, false));
  }

  function sampleView(s, compact) {
    const g = s.generation || {}, score = s.score || {};
    const code = /^(code|lcb)/.test(String(score.scorer || ""));
    const facts = {
      value: score.value, scorer: score.scorer, "finish reason": g.finish_reason,
      "prompt tokens": g.prompt_tokens, "completion tokens": g.completion_tokens, seed: g.seed,
      "prompt hash": g.prompt_hash ? String(g.prompt_hash).slice(0, 12) : null,
    };
    const parts = [
      el("div", { class: "verdicts" }, badges(s.flags)),
      el("div", { class: "answers" }, el("span", { class: "muted" }, "extracted"), el("span", { class: "extracted" }, answerText(score.extracted, code)),
        el("span", { class: "muted" }, "gold"), el("span", { class: "gold" }, goldView(s.gold))),
      kv(facts),
    ];
    if (!compact) {
      parts.push(el("h2", {}, "Prompt"));
      if (s.messages) parts.push(s.messages.map((m) => el("div", { class: "turn" }, el("div", { class: "role" }, m.role), textBlock(m.content))));
      else parts.push(el("p", { class: "muted" }, s.prompt_note || "prompt not available"));
    }
    const hasSplit = "reasoning" in g || "answer" in g;
    if (hasSplit) {
      const thinking = textBlock(g.reasoning);
      thinking.classList.add("thinking");
      parts.push(el("h2", {}, "Thinking"), el("details", { open: compact ? null : "" }, el("summary", {},
        (g.reasoning || "").length + " characters"), thinking));
      const answer = g.answer === null && g.unclosed_think
        ? el("p", { class: "muted" }, "no answer: the think block never closed") : textBlock(g.answer);
      answer.classList.add("answer");
      parts.push(el("h2", {}, "Answer"), answer);
    } else {
      parts.push(el("h2", {}, "Completion"), textBlock(g.text));
    }
    parts.push(el("h2", {}, "Scorer details"), details(score.details));
    return el("div", { class: "sample" }, parts);
  }

  function details(d) {
    if (!d || typeof d !== "object") return el("p", { class: "muted" }, "none");
    const rows = Object.entries(d).map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {},
      typeof v === "string" && (v.includes("\n") || v.length > 120) ? textBlock(v, { math: false })
        : typeof v === "object" && v !== null ? el("pre", { class: "hv-text" }, JSON.stringify(v, null, 2)) : value(v))));
    return el("table", { class: "kv details" }, el("tbody", {}, rows));
  }

  async function comparePage(a, b) {
    const [report, nameA, nameB] = await Promise.all([load("compare/" + a + "/" + b), runName(a), runName(b)]);
    trail(["runs", "#/"], [nameA + " → " + nameB, ""]);
    const head = ["benchmark", "items", "base", "candidate", "Δ [95% CI]", "test", "p", "p (Holm)", "MDE", "verdict"];
    const rows = report.comparisons.map((c) => el("tr", {}, el("td", {}, c.benchmark), el("td", { class: "num" }, c.items),
      el("td", { class: "num" }, pct(c.base)), el("td", { class: "num" }, pct(c.candidate)),
      el("td", { class: "num" }, (c.delta >= 0 ? "+" : "") + pct(c.delta) + " [" + pct(c.ci95[0]) + ", " + pct(c.ci95[1]) + "]"),
      el("td", {}, c.test), el("td", { class: "num" }, num(c.p)), el("td", { class: "num" }, num(c.p_holm)),
      el("td", { class: "num" }, pct(c.mde)), el("td", {}, c.verdict + (c.drift && c.drift.length ? " (drift: " + c.drift.join("; ") + ")" : ""))));
    const flips = report.flips.map((f) => el("div", { class: "card flips" }, el("h2", {}, f.benchmark),
      flipList("right → wrong", "right_to_wrong", f, a, b), flipList("wrong → right", "wrong_to_right", f, a, b)));
    show(el("h1", {}, "Base " + nameA + ", candidate " + nameB),
      el("p", {}, el("span", { class: "verdict v" + report.exit_code, id: "verdict" }, "harness regress: " + report.verdict +
        " (exit " + report.exit_code + ")")),
      el("table", {}, el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))), el("tbody", {}, rows)),
      el("ul", { class: "messages" }, report.messages.map((m) => el("li", {}, m))),
      el("p", { class: "muted" }, "Percent. An item is right in a run when at least half its samples are correct."),
      flips);
  }

  function flipList(title, key, f, a, b) {
    const entries = f[key];
    return el("div", { class: key }, el("h3", {}, title + " (" + entries.length + ")"),
      entries.length ? el("ul", {}, entries.map((e) => el("li", {},
        link(["#/side", a, f.base_index, e.base[1], b, f.candidate_index, e.candidate[1]].join("/"), "item " + e.id),
        el("span", { class: "muted" }, "  " + pct(e.base[0]) + "% → " + pct(e.candidate[0]) + "% of samples correct"))))
        : el("p", { class: "muted" }, "none"));
  }

  async function sidePage([a, ba, ka, b, bb, kb]) {
    const [left, right, nameA, nameB, rowsA, rowsB] = await Promise.all([
      load("run/" + a + "/bench/" + ba + "/sample/" + ka), load("run/" + b + "/bench/" + bb + "/sample/" + kb),
      runName(a), runName(b), load("run/" + a + "/bench/" + ba + "/rows"), load("run/" + b + "/bench/" + bb + "/rows")]);
    trail(["runs", "#/"], [nameA + " → " + nameB, "#/compare/" + a + "/" + b], ["item " + left.item_id, ""]);
    function others(rows, side) {
      const item = rows.items.find((i) => i.id === side.item_id);
      if (!item || item.samples.length < 2) return null;
      const here = [a, ba, ka, b, bb, kb];
      return el("div", {}, el("span", { class: "muted" }, "samples of this item: "), chips(item.samples, (k) => {
        const next = here.slice();
        next[side === left ? 2 : 5] = k;
        return "#/side/" + next.join("/");
      }));
    }
    show(el("h1", {}, "Item " + left.item_id), el("div", { class: "pair" },
      el("div", { class: "side-base" }, el("h2", {}, "Base: " + nameA + ", sample " + left.sample_idx), others(rowsA, left),
        sampleView(left, true)),
      el("div", { class: "side-candidate" }, el("h2", {}, "Candidate: " + nameB + ", sample " + right.sample_idx),
        others(rowsB, right), sampleView(right, true))));
  }

  // --- training runs ------------------------------------------------------------------------------
  async function trainPage(r, t) {
    const [name, i] = await Promise.all([runName(r), index()]);
    trail(["runs", "#/"], [name, "#/run/" + r]);
    const curves = await load("run/" + r + "/curves");
    const charts = el("div", { class: "charts", id: "charts" });
    const shown = new Set(t.shown);
    function drawCharts() {
      charts.replaceChildren();
      append(charts, [...shown].filter((k) => curves[k]).map((k) => lineChart(k, curves[k])));
    }
    const picker = el("details", {}, el("summary", {}, "metrics (" + t.keys.length + ")"), el("div", { class: "keys" },
      t.keys.map((k) => el("label", { style: "display:block" }, el("input", { type: "checkbox", checked: shown.has(k) ? "" : null,
        onchange: (e) => { if (e.target.checked) shown.add(k); else shown.delete(k); drawCharts(); } }), " " + k))));
    const evals = await Promise.all(t.evals.map((e) => load("run/" + e.run).then((s) => [e, s])));
    const benches = [...new Set(evals.flatMap(([, s]) => s.benchmarks.map((b) => b.name)))];
    const evalRows = evals.map(([e, s]) => el("tr", {}, el("td", {}, e.step), el("td", {}, link("#/run/" + e.run, e.name)),
      benches.map((name) => {
        const b = s.benchmarks.find((x) => x.name === name);
        const m = b && b.metrics;
        const avg = m && Object.keys(m).find((k) => k.startsWith("avg@"));
        return el("td", { class: "num" }, avg ? pct(m[avg]) : "–");
      }),
      el("td", {}, evals.length && evals[0][0].run !== e.run ? link("#/compare/" + evals[0][0].run + "/" + e.run, "vs " + evals[0][0].name) : "")));
    const steps = t.steps.map((s) => el("tr", {}, el("td", {}, link("#/run/" + r + "/step/" + s.step, "step " + s.step)),
      el("td", { class: "num" }, s.records), el("td", {}, s.roles.join(", "))));
    show(el("h1", {}, name + (t.method ? " (" + t.method + ")" : "")), kv(t.settings),
      t.options ? el("details", {}, el("summary", {}, "method options"), kv(t.options)) : null,
      el("h2", {}, "Logged metrics (metrics.jsonl)"), picker, charts,
      el("h2", {}, "Evaluations (evals/step-N)"), evals.length ? el("table", { class: "evals" }, el("thead", {}, el("tr", {}, el("th", {}, "step"),
        el("th", {}, "run"), benches.map((b) => el("th", { class: "num" }, b + " avg@N")), el("th", {}, ""))), el("tbody", {}, evalRows))
        : el("p", { class: "muted" }, "none"),
      el("h2", {}, "Samples (samples.jsonl)"), steps.length ? el("table", { class: "steps" }, el("thead", {}, el("tr", {},
        el("th", {}, "step"), el("th", { class: "num" }, "records"), el("th", {}, "roles"))), el("tbody", {}, steps))
        : el("p", { class: "muted" }, "this method writes no samples.jsonl"));
    drawCharts();
    void i;
  }

  function lineChart(title, points) {
    const W = 360, H = 200, L = 48, R = 10, T = 22, B = 28;
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("width", W); svg.setAttribute("height", H); svg.setAttribute("class", "chart");
    svg.setAttribute("data-key", title);
    function add(tag, attrs, text) {
      const node = document.createElementNS(ns, tag);
      for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
      if (text !== undefined) node.textContent = text;
      svg.appendChild(node);
      return node;
    }
    add("text", { x: L, y: 14, class: "title" }, title);
    if (!points.length) { add("text", { x: L, y: H / 2 }, "not logged"); return svg; }
    const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
    let [x0, x1] = extent(xs), [y0, y1] = extent(ys);
    if (x0 === x1) { x0 -= 1; x1 += 1; }
    if (y0 === y1) { y0 -= 1; y1 += 1; }
    const sx = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - R), sy = (y) => H - B - ((y - y0) / (y1 - y0)) * (H - T - B);
    add("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#d0d7de" });
    add("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#d0d7de" });
    add("text", { x: L - 4, y: sy(y1) + 4, "text-anchor": "end" }, String(+y1.toPrecision(3)));
    add("text", { x: L - 4, y: sy(y0) + 4, "text-anchor": "end" }, String(+y0.toPrecision(3)));
    add("text", { x: L, y: H - 10 }, String(x0));
    add("text", { x: W - R, y: H - 10, "text-anchor": "end" }, String(x1));
    add("text", { x: (L + W) / 2, y: H - 4, "text-anchor": "middle" }, "step");
    add("polyline", { points: points.map((p) => sx(p[0]) + "," + sy(p[1])).join(" "), fill: "none", stroke: "#0969da", "stroke-width": 1.5 });
    points.forEach((p) => add("circle", { cx: sx(p[0]), cy: sy(p[1]), r: 2.2, fill: "#0969da" }).appendChild(
      Object.assign(document.createElementNS(ns, "title"), { textContent: "step " + p[0] + ": " + p[1] })));
    return svg;
  }

  async function stepPage(r, step, params) {
    const [t, name] = await Promise.all([load("run/" + r), runName(r)]);
    const steps = t.steps.map((s) => s.step);
    const at = steps.indexOf(step);
    const data = await load("run/" + r + "/step/" + step);
    const role = params.get("role") || "";
    trail(["runs", "#/"], [name, "#/run/" + r], ["step " + step, ""]);
    const roles = [...new Set(data.records.map((x) => x.role))];
    const base = "#/run/" + r + "/step/";
    const q = role ? "?role=" + encodeURIComponent(role) : "";
    const nav = el("div", { class: "bar" },
      at > 0 ? link(base + steps[at - 1] + q, "‹ step " + steps[at - 1]) : null,
      el("strong", {}, "step " + step),
      at >= 0 && at < steps.length - 1 ? link(base + steps[at + 1] + q, "step " + steps[at + 1] + " ›") : null,
      el("span", { class: "muted" }, "role:"),
      link(base + step, role ? "all" : el("strong", {}, "all")),
      roles.map((x) => link(base + step + "?role=" + encodeURIComponent(x), x === role ? el("strong", {}, x) : x)));
    const records = data.records.filter((x) => !role || x.role === role).map((x, k) => el("div", { class: "card record", "data-role": x.role },
      el("div", { class: "role" }, x.role + " #" + (k + 1)), recordView(x.record)));
    show(nav, el("h1", {}, name + ": step " + step), records.length ? records : el("p", { class: "muted" }, "no records"));
  }

  // A samples.jsonl record, whatever the method: texts as text blocks, number series as sparklines.
  // Deep nesting is shown as JSON text, so no record can recurse the page off its stack.
  function recordView(record, nest) {
    if (nest > MAX_NEST) return el("pre", { class: "hv-text" }, jsonText(record));
    const rows = Object.entries(record).filter(([k]) => k !== "step").map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {}, field(k, v, 0, nest || 0))));
    return el("table", { class: "kv" }, el("tbody", {}, rows));
  }
  function field(key, v, depth, nest) {
    if (typeof v === "string") {
      if (depth > 0 || v.length > 80 || v.includes("\n")) return textBlock(v);
      const span = el("span", { class: "hv-text" }, v);
      renderMath(span);
      return span;
    }
    if (Array.isArray(v)) {
      if (v.length > 3 && v.every((x) => typeof x === "number")) {
        const listed = v.length > MAX_LISTED ? v.slice(0, MAX_LISTED).join(", ") + ", … (first " + MAX_LISTED + ")" : v.join(", ");
        return el("div", {}, sparkline(v), el("details", {}, el("summary", {}, v.length + " values"), el("code", { class: "hv-text" }, listed)));
      }
      if (v.every((x) => x === null || (typeof x !== "object" && typeof x !== "string"))) {
        return el("code", { class: "hv-text" }, JSON.stringify(v));
      }
      if (depth > 3) return el("pre", { class: "hv-text" }, jsonText(v));
      return el("ol", { start: 0 }, v.map((x) => el("li", {}, x !== null && typeof x === "object" && !Array.isArray(x)
        ? recordView(x, nest + 1) : field(key, x, depth + 1, nest + 1))));
    }
    if (v !== null && typeof v === "object") return depth > 3 ? el("pre", { class: "hv-text" }, jsonText(v)) : recordView(v, nest + 1);
    return value(v);
  }
  // The smallest and largest of any number of values, in a loop: Math.min(...values) passes each value as
  // an argument, and a few hundred thousand of them overflow the browser's stack.
  function extent(values) {
    let lo = Infinity, hi = -Infinity;
    for (const x of values) { if (x < lo) lo = x; if (x > hi) hi = x; }
    return [lo, hi];
  }
  // At most `width` points that keep each stretch's extremes, so a long trace draws as fast as a short one.
  function thinned(values, width) {
    if (values.length <= 2 * width) return values.map((y, i) => [i, y]);
    const points = [], per = values.length / width;
    for (let b = 0; b < width; b++) {
      const from = Math.floor(b * per), to = Math.floor((b + 1) * per);
      let lo = from, hi = from;
      for (let i = from; i < to; i++) { if (values[i] < values[lo]) lo = i; if (values[i] > values[hi]) hi = i; }
      points.push([Math.min(lo, hi), values[Math.min(lo, hi)]], [Math.max(lo, hi), values[Math.max(lo, hi)]]);
    }
    return points;
  }
  function jsonText(v) {
    try { return JSON.stringify(v, null, 1); } catch (e) { return "(too deeply nested to show)"; }
  }
  function sparkline(values) {
    const W = 320, H = 48;
    const [lo, hi] = extent(values), span = hi - lo || 1, last = Math.max(1, values.length - 1);
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("width", W); svg.setAttribute("height", H); svg.setAttribute("class", "spark");
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", thinned(values, W).map(([i, y]) => (4 + (i / last) * (W - 8)) + "," + (H - 4 - ((y - lo) / span) * (H - 8))).join(" "));
    line.setAttribute("fill", "none"); line.setAttribute("stroke", "#8250df");
    svg.appendChild(line);
    const label = document.createElementNS(ns, "title");
    label.textContent = "min " + lo + ", max " + hi + " (" + values.length + " points along the trace)";
    svg.appendChild(label);
    return svg;
  }

  route();
})();
