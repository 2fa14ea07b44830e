"""A small OpenAI-compatible server on 127.0.0.1 for injecting faults a real server cannot produce
on demand: rate limits, 5xx bursts, dropped connections, HTML pages, refusals, reasoning fields.
Real-server tests live in tests/engines."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "fake/model"


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """A deterministic reply that depends on the seed, in chat or completions shape."""
    text = f"The answer is \\boxed{{{body['seed'] % 1000}}}"
    usage = {"prompt_tokens": 11, "completion_tokens": 7}
    if "messages" in body:
        return {"choices": [{"message": {"content": text}, "finish_reason": "stop"}], "usage": usage}
    return {"choices": [{"text": text, "finish_reason": "stop"}], "usage": usage}


def model_card() -> dict[str, Any]:
    """The served model as vLLM lists it, with the fields that change on every call."""
    permission = {"id": f"modelperm-{time.time_ns()}", "created": int(time.time())}
    return {"id": MODEL, "object": "model", "created": int(time.time()), "owned_by": "vllm",
            "root": MODEL, "parent": None, "max_model_len": 4096, "permission": [permission]}  # fmt: skip


class QuietServer(ThreadingHTTPServer):
    """Says nothing when a client hangs up first (a client that timed out), as a test intends."""

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeOpenAI:
    """Serves GET /v1/models and POST /v1/chat/completions and /v1/completions.

    `reply(body, count)` returns (status, payload, headers) for the count-th completion request: a
    str payload is sent as an HTML page, a status of None drops the connection without an answer;
    the default answers every request. Each completion request's body and Authorization header are kept.
    """

    def __init__(self, reply: Callable[[dict, int], tuple[int | None, dict | str, dict]] | None = None):
        self.reply = reply or (lambda body, count: (200, answer(body), {}))
        self.bodies: list[dict] = []
        self.auth: list[str | None] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int | None, payload: dict | str, headers: dict) -> None:
                if status is None:  # drop the connection without an answer
                    self.close_connection = True
                    return
                text = payload if isinstance(payload, str) else json.dumps(payload)
                data = text.encode()
                self.send_response(status)
                self.send_header(
                    "Content-Type", "text/html" if isinstance(payload, str) else "application/json"
                )
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path == "/v1/models":
                    self._send(200, {"data": [model_card()]}, {})
                else:
                    self._send(404, {"error": "not found"}, {})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake.lock:
                    fake.bodies.append(body)
                    fake.auth.append(self.headers.get("Authorization"))
                    count = len(fake.bodies)
                self._send(*fake.reply(body, count))

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
