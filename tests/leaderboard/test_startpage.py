"""The page a visitor meets while a first start checks the result files."""

from __future__ import annotations

import socket
import threading
import urllib.request

from yoxla.views.startpage import StartPage


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as r:
        assert r.status == 200
        return r.read().decode("utf-8")


def test_the_page_counts_the_files_then_gives_the_port_back():
    port = _free_port()
    page = StartPage("127.0.0.1", port)
    threads = set(threading.enumerate())
    assert page.start()
    try:
        assert set(threading.enumerate()) <= threads  # served from a child process: admission may still fork
        assert "Starting" in _get(port)
        page.update(3, 300)
        body = _get(port)
        assert "Checking 3 of 300 result files" in body and "http-equiv='refresh'" in body
        page.update(300, 300)
        assert "Checking 300 of 300" in _get(port)
        busy = StartPage("127.0.0.1", port)
        assert busy.start() is False  # a port in use: nothing served, no traceback
    finally:
        page.stop()
    with socket.socket() as s:  # the leaderboard can take the port now
        # with SO_REUSEADDR, as uvicorn binds its socket: the page's closed connections may sit in
        # TIME_WAIT for a minute (without it this bind failed now and then on a busy machine)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
