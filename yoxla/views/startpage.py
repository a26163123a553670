"""The page a visitor sees while the Space checks its result files (a first start can take a while).

``python app.py`` serves this small page on the app's own port while admission runs: it says
"Checking N of M result files" and reloads itself every two seconds; once the board is
admitted the page is closed and the leaderboard takes the port, so the next reload shows it.
Only numbers and fixed text are shown (no file name, nothing from a result file), with the
standard library's HTTP server in a child process (so the admitting process keeps a single
thread and may fork its workers); the counts reach it through shared memory.
"""

from __future__ import annotations

import html
import multiprocessing
import socket
import struct
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REFRESH_S = 2


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # in the page's own process
    allow_reuse_address = True


class StartPage:
    """``start()``, then ``update(done, total)`` as files are checked, then ``stop()``."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        ctx = multiprocessing.get_context("fork")
        self._done = ctx.Value("q", 0, lock=False)
        self._total = ctx.Value("q", 0, lock=False)
        self._ctx = ctx
        self._proc: Any = None

    @property
    def done(self) -> int:
        return int(self._done.value)

    @property
    def total(self) -> int:
        return int(self._total.value)

    def text(self) -> str:
        if self.total:
            return f"Checking {self.done} of {self.total} result files"
        return "Starting (loading the code, then finding the result files)"

    def body(self) -> bytes:
        line = html.escape(self.text())
        page = (
            "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='refresh' content='{REFRESH_S}'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            "<title>YOXLA leaderboard: starting</title></head>"
            "<body style='font-family: sans-serif; max-width: 40em; margin: 3em auto; padding: 0 1em'>"
            "<h1>YOXLA leaderboard</h1>"
            f"<p id='yoxla-starting'>{line}…</p>"
            "<p>Every stored number of every file is re-derived from its stored answers before the file is "
            "shown. This page reloads by itself; the leaderboard appears when the check is done.</p>"
            "</body></html>"
        )
        return page.encode("utf-8")

    def update(self, done: int, total: int) -> None:
        self._done.value, self._total.value = done, total

    def _serve(self, server: _Server) -> None:
        server.serve_forever()

    def start(self) -> bool:
        """Serve the page from a child process; False (nothing served) when the port cannot be had."""
        page = self

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive with a short idle time, and connections ended with a reset (linger 0): a
            # closed connection leaves no TIME_WAIT that would keep the leaderboard off this port.
            protocol_version = "HTTP/1.1"
            timeout = 1.0

            def setup(self) -> None:
                super().setup()
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

            def do_GET(self) -> None:
                body = page.body()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # quiet: no request log
                return

        try:
            server = _Server((self.host, self.port), Handler)
        except OSError:
            return False
        self._proc = self._ctx.Process(
            target=self._serve, args=(server,), name="yoxla-startpage", daemon=True
        )
        self._proc.start()
        server.server_close()  # the child holds the listening socket now
        return True

    def stop(self) -> None:
        """End the page (its process, and with it the listening socket)."""
        if self._proc is None:
            return
        self._proc.terminate()
        self._proc.join(timeout=5)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join(timeout=5)
        self._proc = None
