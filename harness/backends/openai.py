"""Any OpenAI-compatible server (vLLM, SGLang, hosted APIs) over HTTP.

One HTTP request per sample, each with its own seed, so every server (including those that refuse
`n > 1`) returns the same samples a local vLLM engine would, and a resumed run asks only for what
is missing. At most `concurrency` requests are in flight. While the server is unavailable (refused
or dropped connections; 429, 502, 503, 504) every request polls it about once a second (honouring
Retry-After) until it has not answered for `server_wait` seconds; a request that fails otherwise (no
reply within `request_timeout`; 408, 409, 425, 500; a 2xx that is not a JSON object) is retried `max_retries`
times with exponential backoff. Other errors stop the run at once. Completions that finished before an error
are still handed back, so no finished record is lost.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

from harness import HarnessError
from harness.backends.chat import ChatPrompt, chosen_options, prompt_hash
from harness.core.runinfo import stable_hash
from harness.core.thinking import THINK_CLOSE, prompt_opens_think
from harness.core.types import Completion, Request

UNAVAILABLE = {429, 502, 503, 504}  # down, busy, or unreachable behind a proxy: wait for it
RETRYABLE = {408, 409, 425, 500}  # this request failed: retry it a few times
API_KEY_ENV = "OPENAI_API_KEY"
STABLE_CARD = ("id", "object", "owned_by", "root", "parent", "max_model_len")


class ServerError(HarnessError):
    """The server refused a request, failed it through every retry, or stayed unavailable too long."""


class OpenAIBackend:
    name = "openai"
    ENGINE_FIELDS = (
        "base_url", "api", "revision", "concurrency", "request_timeout", "max_retries", "server_wait",
        "trust_remote_code", "raw_prompt",
    )  # fmt: skip
    SET_BY_ENGINE = frozenset()
    server = True  # a model a server at --base-url serves: no weights here, no --model-arg

    @staticmethod
    def gpus(engine, cluster_gpus: float) -> float:
        return 0.0

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api: str = "chat",
        revision: str | None = None,
        concurrency: int = 32,
        request_timeout: float = 600.0,
        max_retries: int = 5,
        server_wait: float = 300.0,
        backoff: float = 1.0,
        trust_remote_code: bool = False,
        raw_prompt: bool = False,
    ):
        import httpx

        if api not in ("chat", "completions"):
            raise HarnessError(f"--api must be chat or completions, not {api!r}")
        self.model, self.api, self.concurrency = model, api, concurrency
        self.base_url = base_url.rstrip("/")
        self.max_retries, self.server_wait, self.backoff = max_retries, server_wait, backoff
        self.outage = Outage()
        key = os.environ.get(API_KEY_ENV)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.client = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(request_timeout, connect=min(request_timeout, 30.0)),
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        )
        self.trust_remote_code, self.raw_prompt = trust_remote_code, raw_prompt
        self.chat = self._local_template(model, revision)
        self.card = self._model_card()

    def _local_template(self, model: str, revision: str | None) -> ChatPrompt | None:
        """The model's chat template when it can be loaded here; plain completions need it."""
        try:
            return ChatPrompt(model, revision, trust_remote_code=self.trust_remote_code, raw=self.raw_prompt)
        except HarnessError as e:
            if self.api == "completions":
                raise HarnessError(f"--api completions renders prompts locally: {e}") from None
            return None

    def _model_card(self) -> dict[str, Any]:
        """GET /models: checks the server serves the model; keeps the fields that stay the same
        from call to call (vLLM adds max_model_len; `created` and permission ids change each time)."""
        listing = self._call("GET", "/models", None)
        cards = {card.get("id"): card for card in listing.get("data", [])}
        if self.model not in cards:
            served = ", ".join(map(str, cards)) or "none"
            raise ServerError(f"{self.base_url} does not serve model {self.model!r}; it serves: {served}")
        return {key: cards[self.model][key] for key in STABLE_CARD if key in cards[self.model]}

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "model": self.model,
            "base_url": self.base_url,
            "api": self.api,
            "concurrency": self.concurrency,
            **chosen_options(self.trust_remote_code, self.raw_prompt, None),
            "server_model": self.card,
            "chat_template_sha256": self.chat.template_sha256 if self.chat else None,
            "httpx": version("httpx"),
        }

    def context_length(self) -> int | None:
        return self.card.get("max_model_len")

    def prompt_tokens(self, messages: Sequence[dict[str, str]]) -> int | None:
        return self.chat.count(messages) if self.chat else None

    def close(self) -> None:
        self.client.close()

    def generate(self, requests: Sequence[Request]) -> Iterator[list[Completion]]:
        """Each completion as soon as it arrives; on a fatal error, drain what is in flight, then raise."""
        pending = iter(requests)
        error: Exception | None = None
        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="openai") as pool:
            running: set[Future] = set()
            while True:
                while error is None and len(running) < self.concurrency:
                    request = next(pending, None)
                    if request is None:
                        break
                    running.add(pool.submit(self._complete, request))
                if not running:
                    break
                finished, running = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    try:
                        yield [future.result()]
                    except Exception as e:
                        error = error or e
        if error is not None:
            raise error

    def _complete(self, request: Request) -> Completion:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "seed": request.seed,
            "n": 1,
        }
        if request.top_k > 0:
            body["top_k"] = request.top_k  # an extension vLLM and SGLang servers accept
        if request.stop:
            body["stop"] = list(request.stop)
        prompt = self.chat.render(request.messages) if self.chat else None
        cut_from = None
        if self.api == "chat":
            if request.max_input_tokens is not None:
                raise HarnessError("--max-input-tokens cuts prompts in tokens locally: use --api completions")
            body["messages"] = list(request.messages)
            choice, usage = self._choice("/chat/completions", body)
            text, opened = joined_reasoning(choice["message"], prompt_opens_think(prompt or ""))
        else:
            ids, length = self.chat.tokens(prompt, request.max_input_tokens)
            body["prompt"] = ids  # token ids: no second BOS, no re-tokenizing
            cut_from = length if length > len(ids) else None
            choice, usage = self._choice("/completions", body)
            text, opened = choice.get("text") or "", prompt_opens_think(prompt)
        return Completion(
            request=request,
            text=text,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            finish_reason=choice.get("finish_reason"),
            prompt_hash=prompt_hash(prompt) if prompt else stable_hash(request.messages),
            think_opened=opened,
            prompt_cut_from=cut_from,
        )

    def _choice(self, path: str, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The reply's first choice and its usage; a reply of another shape is refused in one line."""
        reply = self._call("POST", path, body)
        problem = reply_problem(reply, "message" if path == "/chat/completions" else "text")
        if problem:
            raise ServerError(f"{self.base_url}{path} answered {problem}: {one_line(str(reply))[:300]}")
        return reply["choices"][0], reply.get("usage") or {}

    def _call(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        """One API call, retried while the server is unavailable and, a few times, when it fails."""
        started, failures = time.monotonic(), 0
        while True:
            outcome = self._attempt(method, path, body)
            if not isinstance(outcome, Failure):
                return outcome
            if outcome.unavailable:
                waited = self.outage.waited()
                if waited >= self.server_wait:
                    raise ServerError(
                        f"{method} {self.base_url}{path}: no answer for {waited:.1f} s "
                        f"(the limit is {self.server_wait:g} s); last: {outcome}"
                    )
                pause = min(outcome.retry_after or self._poll(), self.server_wait - waited)
            else:
                if failures == self.max_retries:
                    raise ServerError(
                        f"{method} {self.base_url}{path} still failing after {failures} retries "
                        f"in {time.monotonic() - started:.1f} s: {outcome}"
                    )
                pause = outcome.retry_after or self._backoff(failures)
                failures += 1
            time.sleep(pause)

    def _attempt(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any] | Failure:
        """One request: the reply, or why it can be retried; a refusal raises at once."""
        import httpx

        try:
            response = self.client.request(method, path, json=body)
        except httpx.TransportError as e:  # no reply in time fails this request; the others mean "down"
            slow = isinstance(e, httpx.TimeoutException) and not isinstance(e, httpx.ConnectTimeout)
            return Failure(f"{type(e).__name__}: {e}", unavailable=not slow)
        status, wait_for = response.status_code, retry_after(response.headers.get("retry-after"))
        if status in UNAVAILABLE:
            return Failure(f"HTTP {status}: {response.text}", True, wait_for)
        self.outage.answered()
        if status in RETRYABLE:
            return Failure(f"HTTP {status}: {response.text}", False, wait_for)
        if status >= 400:
            raise ServerError(
                f"{method} {self.base_url}{path} failed with HTTP {status}: {one_line(response.text)}"
            )
        try:
            reply = response.json()
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            return Failure(f"HTTP {status} with a body that is not a JSON object: {response.text}")
        return reply

    def _backoff(self, attempt: int) -> float:
        return min(self.backoff * 2**attempt, 60.0) * random.uniform(0.5, 1.5)

    def _poll(self) -> float:
        """The pause between attempts while the server is unavailable: about a second."""
        return min(self.backoff, 1.0) * random.uniform(0.5, 1.5)


@dataclass(frozen=True)
class Failure:
    """Why an attempt failed; `unavailable` when the server could not be reached or was down."""

    problem: str
    unavailable: bool = False
    retry_after: float | None = None

    def __str__(self) -> str:
        return one_line(self.problem)


class Outage:
    """Since when the server has not answered, shared by all requests: any answer ends the outage."""

    def __init__(self):
        self.since: float | None = None
        self.lock = threading.Lock()

    def answered(self) -> None:
        self.since = None

    def waited(self) -> float:
        """Seconds since the first failure after the server last answered (0 for that first one)."""
        with self.lock:
            now = time.monotonic()
            self.since = self.since if self.since is not None else now
            return now - self.since


def one_line(text: str) -> str:
    """The start of a reply or an error on one line: bodies may be whole HTML pages."""
    return " ".join(text.split())[:300]


def retry_after(header: str | None) -> float | None:
    """Seconds from a Retry-After header given in seconds (HTTP dates are ignored)."""
    try:
        return min(max(float(header), 0.0), 300.0) if header else None
    except ValueError:
        return None


def reply_problem(reply: dict[str, Any], field: str) -> str | None:
    """What is wrong with a completion reply's shape (`field`: "message" for chat, "text"), or None."""
    choices = reply.get("choices")
    if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
        return "without a list of choices"
    choice, usage = choices[0], reply.get("usage")
    text = choice.get(field)
    if field == "message":
        if not isinstance(text, dict):
            return "a choice without a message"
        text = {k: v for k, v in text.items() if k in ("content", "reasoning_content", "reasoning")}
        if not all(v is None or isinstance(v, str) for v in text.values()):
            return "a message whose content is not text"
    elif not (text is None or isinstance(text, str)):
        return "a choice whose text is not text"
    if not (choice.get("finish_reason") is None or isinstance(choice["finish_reason"], str)):
        return "a finish reason that is not a string"
    if usage is not None and not (
        isinstance(usage, dict)
        and all(type(usage.get(k)) in (int, type(None)) for k in ("prompt_tokens", "completion_tokens"))
    ):
        return "a usage that is not token counts"
    return None


def joined_reasoning(message: dict[str, Any], think_opened: bool) -> tuple[str, bool]:
    """A reasoning server returns the thinking apart from the answer; put them back in one text.

    The text becomes "<reasoning></think><answer>" with the think block counted as opened, so the
    usual split recovers both parts, and a reasoning that never finished stays an unclosed think.
    """
    content = message.get("content")
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if not reasoning:
        return content or "", think_opened
    if content is None:
        return reasoning, True
    return f"{reasoning}{THINK_CLOSE}{content}", True
