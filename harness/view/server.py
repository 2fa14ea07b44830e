"""`harness view RUN_DIR...`: the page and its data over HTTP, on 127.0.0.1 unless a host is chosen.

Only three kinds of request are answered: the page (`/`), its packaged assets (`/static/...`, resolved
inside the package's static folder) and data (`/api/PATH`, answered by `Site.get`, whose paths are
positions, not file names). Nothing else on the machine, the run folders included, is served as a file.
A malformed path (too long, broken percent-escapes, control characters or raw bytes outside ASCII, `..`)
is answered 400 or 414, one that names nothing 404, never with a traceback.

Connections cost no thread while they are idle: they wait in one selector until they send something,
then a bounded pool of workers answers them (each read on the socket times out). A connection idle for
`IDLE_SECONDS` is closed, and beyond `MAX_WAITING` waiting connections the oldest is closed, so
thousands of idle connections neither exhaust the threads nor keep a real request from an answer.
"""

from __future__ import annotations

import json
import mimetypes
import selectors
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from harness import HarnessError
from harness.view.site import Site

STATIC = Path(__file__).parent / "static"
MODE = "mode.js"  # tells the page where its data comes from: written per server or bundle
# Defence in depth: even injected markup could run no script (KaTeX sets inline styles)
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; font-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'"
)
TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html", ".woff2": "font/woff2"}


MAX_PATH = 2048  # characters of a request's path; the page's longest is under 100
IDLE_SECONDS = 10.0  # a connection that sends nothing for this long is closed; each read's timeout too
MAX_WAITING = 4096  # idle connections held at once (beyond: the oldest is closed)
WORKERS = 16  # requests answered at once


class BadPath(ValueError):
    """A request path that names nothing this server could answer: the client's error (4xx)."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status


def request_path(target: str) -> str:
    """The decoded path of a request target; BadPath for one too long, not UTF-8 once percent-decoded,
    or holding a control character (NUL included)."""
    if len(target) > MAX_PATH:
        raise BadPath(414, "path too long")
    try:
        path = unquote(urlsplit(target).path, errors="strict")
    except (ValueError, UnicodeDecodeError):  # a malformed authority ("//["), a broken UTF-8 escape
        raise BadPath(400, "malformed path") from None
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in path):
        raise BadPath(400, "control character in path")
    if ".." in path.split("/"):  # no page asks for a parent folder; browsers resolve their own
        raise BadPath(400, "'..' in path")
    return path


def static_file(name: str) -> Path | None:
    """A packaged asset by its path under static/, never anything outside it."""
    try:
        path = (STATIC / name).resolve()
        if not path.is_relative_to(STATIC.resolve()) or not path.is_file():
            return None
    except (OSError, ValueError):  # a name too long for the file system
        return None
    return path


def content_type(path: Path) -> str:
    return TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"


class Handler(BaseHTTPRequestHandler):
    site: Site
    hosts: frozenset[str] = frozenset()  # Host headers accepted (empty: any, when exposed with --host)
    timeout = IDLE_SECONDS  # each read of the request; HTTP/1.0: one request per connection

    def parse_request(self) -> bool:
        """A request line holding a byte outside printable ASCII is refused whole: http.server would
        split it on any Unicode space (a raw 0x85 among them) and answer what was left of it."""
        line = self.raw_requestline.rstrip(b"\r\n")
        if any(b < 0x20 or b > 0x7E for b in line):
            self.command, self.requestline, self.request_version = None, "", "HTTP/1.1"
            self.close_connection = True
            self.send_error(400, "malformed request line")
            return False
        return super().parse_request()

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.hosts and self.headers.get("Host", "") not in self.hosts:
            return self._send(421, b"unknown host", "text/plain")  # a rebound DNS name
        try:
            path = request_path(self.path)
        except BadPath as e:
            return self._send(e.status, str(e).encode(), "text/plain")
        try:
            self._route(path)
        except ConnectionError:  # the browser went away mid-answer
            pass
        except Exception as e:  # a bug: one line here, a 500 there, and the server serves on
            sys.stderr.write(f"harness view: {path[:200]!r}: {type(e).__name__}: {e}\n")
            self._send(500, b"server error", "text/plain")

    def _route(self, path: str) -> None:
        if path in ("/", "/index.html"):
            return self._file(STATIC / "index.html")
        if path == f"/static/{MODE}":
            return self._send(200, b'window.HARNESS_MODE = "server";\n', "text/javascript")
        if path.startswith("/static/"):
            found = static_file(path.removeprefix("/static/"))
            return self._file(found) if found else self._send(404, b"not found", "text/plain")
        if path.startswith("/api/"):
            return self._api(path.removeprefix("/api/"))
        return self._send(404, b"not found", "text/plain")

    def _api(self, path: str) -> None:
        try:
            body, status = self.site.get(path), 200
        except KeyError:
            body, status = {"error": f"nothing at {path}"}, 404
        except (HarnessError, OSError, ValueError) as e:
            body, status = {"error": str(e)}, 500
        self._send(status, json.dumps(body, ensure_ascii=False).encode(), "application/json")

    def _file(self, path: Path) -> None:
        self._send(200, path.read_bytes(), content_type(path))

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header(
            "Content-Type", kind + ("; charset=utf-8" if kind.startswith(("text", "app")) else "")
        )
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", POLICY)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:  # quiet: the terminal shows the URL, not each request
        pass


class Server(ThreadingHTTPServer):
    """http.server's, with idle connections held in one selector instead of a thread each."""

    request_queue_size = 128
    idle_seconds, max_waiting = IDLE_SECONDS, MAX_WAITING

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._selector = selectors.DefaultSelector()
        self._lock = threading.Lock()
        self._workers = ThreadPoolExecutor(WORKERS, thread_name_prefix="harness-view")
        self._closing = False
        self._watcher = threading.Thread(target=self._watch, name="harness-view-idle", daemon=True)
        self._watcher.start()

    def process_request(self, request, client_address) -> None:
        """Hold the new connection until it sends something (serve_forever's thread calls this)."""
        with self._lock:
            waiting = self._selector.get_map()
            while len(waiting) >= self.max_waiting:
                self._drop(next(iter(waiting.values())).fileobj)  # the oldest: registered first
            self._selector.register(request, selectors.EVENT_READ, (client_address, time.monotonic()))

    def _watch(self) -> None:
        while not self._closing:
            ready = self._selector.select(timeout=0.2)
            with self._lock:
                for key, _ in ready:
                    if key.fd not in self._selector.get_map():  # dropped since select() saw it
                        continue
                    self._selector.unregister(key.fileobj)
                    try:
                        self._workers.submit(self.process_request_thread, key.fileobj, key.data[0])
                    except RuntimeError:  # the interpreter is exiting: its executors take no work
                        self.shutdown_request(key.fileobj)
                        return
                cutoff = time.monotonic() - self.idle_seconds
                for key in [k for k in self._selector.get_map().values() if k.data[1] < cutoff]:
                    self._drop(key.fileobj)

    def _drop(self, request) -> None:
        self._selector.unregister(request)
        self.shutdown_request(request)

    def server_close(self) -> None:
        self._closing = True
        self._watcher.join()
        with self._lock:
            for key in list(self._selector.get_map().values()):
                self._drop(key.fileobj)
        self._selector.close()
        self._workers.shutdown(wait=False, cancel_futures=True)
        super().server_close()


class IPv6Server(Server):
    address_family = socket.AF_INET6


def make_server(site: Site, host: str = "127.0.0.1", port: int = 0) -> Server:
    """A server for `site` bound to host:port (port 0: a free one), not yet serving."""
    loopback = host in ("127.0.0.1", "localhost", "::1")
    server_class = IPv6Server if ":" in host else Server
    try:
        server = server_class((host, port), Handler)
    except OSError as e:
        raise HarnessError(f"cannot listen on {host}:{port} ({e.strerror}); choose another --port") from None
    bound = server.server_address[1]
    names = (f"127.0.0.1:{bound}", f"localhost:{bound}", f"[::1]:{bound}")
    server.RequestHandlerClass = type(
        "SiteHandler", (Handler,), {"site": site, "hosts": frozenset(names) if loopback else frozenset()}
    )
    return server


def url(server: Server) -> str:
    host, port = server.server_address[:2]
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
