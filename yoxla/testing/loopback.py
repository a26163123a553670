"""A test server on loopback: answers on a daemon thread, started and stopped by ``with``.

The base of :class:`yoxla.testing.fakeserver.FakeServer` (a scripted OpenAI-compatible
server) and :class:`yoxla.testing.recorder.RecordingProxy` (a recording forwarder).
"""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer
from typing import Self


class LoopbackServer:
    """An HTTP server on 127.0.0.1; :meth:`start` makes it and hands it to :meth:`serve`."""

    _httpd: ThreadingHTTPServer | None = None

    def start(self) -> Self:
        raise NotImplementedError

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
