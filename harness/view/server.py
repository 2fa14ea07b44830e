"""`harness view RUN_DIR...`: the page and its data over HTTP, on 127.0.0.1 unless a host is chosen.

Only three kinds of request are answered: the page (`/`), its packaged assets (`/static/...`, resolved
inside the package's static folder) and data (`/api/PATH`, answered by `Site.get`, whose paths are
positions, not file names). Nothing else on the machine, the run folders included, is served as a file.
A malformed path (too long, broken percent-escapes, control characters or raw bytes outside ASCII, `..`)
is answered 400 or 414, one that names nothing 404, never with a traceback.
"""

from __future__ import annotations

import json
import mimetypes
import socket
import sys
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


class IPv6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


def make_server(site: Site, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A server for `site` bound to host:port (port 0: a free one), not yet serving."""
    loopback = host in ("127.0.0.1", "localhost", "::1")
    server_class = IPv6Server if ":" in host else ThreadingHTTPServer
    try:
        server = server_class((host, port), Handler)
    except OSError as e:
        raise HarnessError(f"cannot listen on {host}:{port} ({e.strerror}); choose another --port") from None
    bound = server.server_address[1]
    names = (f"127.0.0.1:{bound}", f"localhost:{bound}", f"[::1]:{bound}")
    server.RequestHandlerClass = type(
        "SiteHandler", (Handler,), {"site": site, "hosts": frozenset(names) if loopback else frozenset()}
    )
    server.daemon_threads = True
    return server


def url(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
