"""An HTTP proxy on 127.0.0.1 in front of the real server, for the faults a server does not make on
demand: an outage (the open connections dropped, new ones refused, then served again) and 2xx replies
that are HTML pages instead of JSON."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

HTML = b"<!DOCTYPE html>\n<html><head><title>Gateway</title></head>\n<body>Please sign in.</body></html>\n"


class FaultProxy:
    """Forwards to `upstream` (an API root such as http://127.0.0.1:8000/v1), except that:

    the first `html` POSTs get a 200 text/html page; POST number `outage_after` + 1 starts an outage of
    `outage_s` seconds that drops it and every open connection and refuses new ones. `forwarded` keeps
    the time of each forwarded request, `back_at` the time the outage ended.
    """

    def __init__(self, upstream: str, *, html: int = 0, outage_after: int | None = None, outage_s: float = 0):
        self.upstream = urlsplit(upstream)
        self.html, self.outage_after, self.outage_s = html, outage_after, outage_s
        self.posts, self.forwarded, self.back_at = 0, [], None
        self.open: set[socket.socket] = set()
        self.lock = threading.Lock()
        self.server = self._listen(0)
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}{self.upstream.path}"
        self.outage: threading.Thread | None = None

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc) -> None:
        if self.outage is not None:
            self.outage.join(timeout=self.outage_s + 10)
        self._stop()

    def _listen(self, port: int) -> ThreadingHTTPServer:
        server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        server.daemon_threads = True
        server.handle_error = lambda request, address: None  # dropped clients are the point
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    def _stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        with self.lock:
            for conn in self.open:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:  # closed meanwhile
                    pass

    def _down_then_up(self) -> None:
        """The outage: refuse connections for `outage_s` seconds, then listen on the same port again."""
        self._stop()
        time.sleep(self.outage_s)
        self.server = self._listen(self.port)
        self.back_at = time.monotonic()

    def _fault(self, method: str) -> str | None:
        """What happens to this request: "html", "outage" or None (forward it)."""
        with self.lock:
            if method != "POST":
                return None
            self.posts += 1
            if self.posts <= self.html:
                return "html"
            if self.posts - 1 == self.outage_after:
                self.outage = threading.Thread(target=self._down_then_up, daemon=True)
                self.outage.start()
                return "outage"
            return None

    def _forward(self, method: str, path: str, body: bytes, headers) -> tuple[int, str, bytes]:
        """The upstream server's reply: status, content type and body."""
        self.forwarded.append(time.monotonic())
        conn = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=120)
        try:
            kept = {k: v for k, v in headers.items() if k.lower() in ("content-type", "authorization")}
            conn.request(method, path, body=body or None, headers=kept)
            reply = conn.getresponse()
            return reply.status, reply.getheader("Content-Type", "application/json"), reply.read()
        finally:
            conn.close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def setup(self):
                super().setup()
                with proxy.lock:
                    proxy.open.add(self.connection)

            def finish(self):
                with proxy.lock:
                    proxy.open.discard(self.connection)
                super().finish()

            def _serve(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                fault = proxy._fault(self.command)
                if fault == "outage":
                    return
                if fault == "html":
                    status, kind, data = 200, "text/html", HTML
                else:
                    status, kind, data = proxy._forward(self.command, self.path, body, self.headers)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _serve

        return Handler
