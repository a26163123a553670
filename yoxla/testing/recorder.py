"""A recording forwarder on loopback: what the runner sent to a server, and what came back.

``RecordingProxy(upstream)`` forwards every request under ``/v1`` to ``upstream`` (an
OpenAI-compatible base URL) and keeps each :class:`Exchange`, for the real-server checks
(tests/runner/test_real_servers.py). Bodies are bounded (:data:`MAX_BODY`), and so is the wait
for the upstream (``timeout_s``).
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from yoxla.testing.loopback import LoopbackServer, QuietHandler

MAX_BODY = 64 * 1024 * 1024
FORWARDED_HEADERS = ("Authorization", "Content-Type", "Accept")


@dataclass
class Exchange:
    method: str
    path: str  # below the base URL: "/chat/completions", "/models", …
    request: Any  # the request body as JSON (None when empty or not JSON)
    status: int
    response: Any  # the reply body as JSON (None when not JSON)


def _json(data: bytes) -> Any:
    try:
        return json.loads(data) if data else None
    except (ValueError, RecursionError):
        return None


class RecordingProxy(LoopbackServer):
    def __init__(self, upstream: str, timeout_s: float = 300.0) -> None:
        self.upstream = upstream.rstrip("/")
        self.timeout_s = timeout_s
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()

    def chat(self) -> list[Exchange]:
        """The chat completion exchanges, in the order they were answered."""
        with self._lock:
            return [e for e in self.exchanges if e.path.startswith("/chat/completions")]

    def start(self) -> RecordingProxy:
        self.serve(ThreadingHTTPServer(("127.0.0.1", 0), _handler(self)))
        return self

    def forward(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
        sub = path[len("/v1") :] if path.startswith("/v1") else path
        req = urllib.request.Request(self.upstream + sub, data=body or None, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                status, data = resp.status, resp.read(MAX_BODY + 1)
        except urllib.error.HTTPError as exc:
            status, data = exc.code, exc.read(MAX_BODY + 1)
        except (urllib.error.URLError, OSError) as exc:
            status, data = 502, json.dumps({"error": {"message": f"proxy: {exc}"}}).encode()
        data = data[:MAX_BODY]
        route = sub.split("?", 1)[0]
        with self._lock:
            self.exchanges.append(Exchange(method, route, _json(body), status, _json(data)))
        return status, data


def _handler(proxy: RecordingProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def _relay(self, method: str) -> None:
            length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
            body = self.rfile.read(length) if length else b""
            headers = {k: v for k in FORWARDED_HEADERS if (v := self.headers.get(k))}
            self.send_body(*proxy.forward(method, self.path, headers, body))

        def do_GET(self) -> None:
            self._relay("GET")

        def do_POST(self) -> None:
            self._relay("POST")

    return Handler
