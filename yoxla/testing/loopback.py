"""A test server on loopback: answers on a daemon thread, started and stopped by ``with``.

The base of :class:`yoxla.testing.fakeserver.FakeServer` (a scripted OpenAI-compatible
server) and :class:`yoxla.testing.recorder.RecordingProxy` (a recording forwarder).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class LoopbackServer(ABC):
    """An HTTP server on 127.0.0.1; a subclass's :meth:`start` makes it and hands it to :meth:`serve`."""

    _httpd: ThreadingHTTPServer | None = None

    @abstractmethod
    def start(self) -> Self:
        """Bind a server on a free loopback port, :meth:`serve` it, and return ``self``."""

    def serve(self, httpd: ThreadingHTTPServer) -> threading.Thread:
        """Answer with ``httpd`` (bound, listening) on a daemon thread, until :meth:`stop`."""
        httpd.daemon_threads = True
        self._httpd = httpd
        thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        return thread

    @property
    def port(self) -> int:
        assert self._httpd is not None, f"{type(self).__name__} not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing and sends JSON bodies."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # one reply, no 40 ms delayed-ACK stall

    def log_message(self, format: str, *args: Any) -> None:  # silence
        pass

    def handle(self) -> None:
        # A client that drops its connection (a run stopping with requests in flight) ends
        # this connection quietly, never with a traceback on the test's stderr.
        try:
            super().handle()
        except (ConnectionResetError, BrokenPipeError, TimeoutError):
            self.close_connection = True

    def send_body(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        """Answer ``status`` with the JSON body ``data`` (and ``headers``)."""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
