"""A scripted OpenAI-compatible server on loopback: the test stand-in for a real API.

It implements ``POST /v1/chat/completions`` and ``GET /v1/models`` with the JSON shapes of
the OpenAI API, so the runner's real ``openai`` client talks to it over real HTTP. Replies
are scripted per prompt (the user message) and per attempt, with configurable latency and
injected faults: 429 with ``Retry-After``, 5xx, slow replies (client timeouts), torn
connections, reasoning fields, ``finish_reason: length``. It counts requests per prompt,
binds only to 127.0.0.1 on a free port, and shuts itself down after ``deadline_s``.

Used by tests/runner and bench/bench_workers.py; ``python -m yoxla.testing.fakeserver``
serves a constant answer with a fixed latency (for benchmarks in a separate process).
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from yoxla.testing.loopback import LoopbackServer, QuietHandler


@dataclass
class Reply:
    """What the server answers to one request."""

    content: str | None = ""
    reasoning: str | None = None  # sent as message.reasoning (OpenRouter style)
    reasoning_content: str | None = None  # sent as message.reasoning_content (vLLM / llama.cpp style)
    finish_reason: str = "stop"
    status: int = 200  # 429, 500, 503, … send an error body instead
    retry_after: float | None = None  # Retry-After header (seconds) on an error
    delay: float = 0.0  # extra seconds before answering (beyond the server latency)
    torn: bool = False  # send half a response, then drop the connection
    message: str | None = None  # error message in the body of a non-200 reply
    usage: dict[str, int] | None = None
    logprobs: list[dict[str, Any]] | None = None  # choices[0].logprobs.content (token, logprob, top_logprobs)
    # An error inside an HTTP 200 reply, as OpenRouter sends one: {"choices": [], "error": body_error}
    body_error: Any = None
    raw_body: bytes | None = None  # an HTTP 200 reply of exactly these bytes (broken proxies, HTML pages)


Responder = Callable[[str, int, dict[str, Any]], Reply]  # (prompt key, attempt number, request body)


def prompt_key(body: dict[str, Any]) -> str:
    """The key replies are scripted by: the last user message."""
    users = [m.get("content", "") for m in body.get("messages", []) if m.get("role") == "user"]
    return str(users[-1]) if users else ""


class _QuietServer(ThreadingHTTPServer):
    """A client that drops its connection (a timeout, a closed keep-alive) is not an error here."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


@dataclass
class FakeServer(LoopbackServer):
    responder: Responder | None = None
    answers: dict[str, str] = field(default_factory=dict)  # prompt key → content (default responder)
    default_answer: str = "?"
    latency: float = 0.0  # seconds added to every chat completion
    max_concurrent: int | None = None  # more chat requests than this in flight at once: 429
    retry_after: float = 0.2  # Retry-After sent with the max_concurrent 429s
    model_name: str = "fake-model"
    deadline_s: float = 300.0

    def __post_init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.bodies: list[dict[str, Any]] = []
        self.auth_headers: set[str] = set()
        self.queries: list[dict[str, str]] = []  # the query parameters of every chat request
        self.statuses: Counter[int] = Counter()
        self.inflight = 0
        self.peak_inflight = 0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._timer: threading.Timer | None = None

    # Life cycle -----------------------------------------------------------------------
    def start(self) -> FakeServer:
        httpd = _QuietServer(("127.0.0.1", 0), _make_handler(self), bind_and_activate=False)
        httpd.request_queue_size = 256
        httpd.allow_reuse_address = True
        httpd.server_bind()
        httpd.server_activate()
        self.serve(httpd)
        self._timer = threading.Timer(self.deadline_s, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        super().stop()

    # Behaviour ------------------------------------------------------------------------
    def reply_for(self, key: str, attempt: int, body: dict[str, Any]) -> Reply:
        if self.responder is not None:
            return self.responder(key, attempt, body)
        return Reply(content=self.answers.get(key, self.default_answer))

    def total_requests(self) -> int:
        with self._lock:
            return sum(self.counts.values())


def _completion_json(server: FakeServer, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning is not None:
        message["reasoning"] = reply.reasoning
    if reply.reasoning_content is not None:
        message["reasoning_content"] = reply.reasoning_content
    prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
    usage = reply.usage or {
        "prompt_tokens": max(1, prompt_chars // 4),
        "completion_tokens": max(1, len(reply.content or "") // 4),
    }
    usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
    logprobs = None if reply.logprobs is None else {"content": reply.logprobs, "refusal": None}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": server.model_name,
        "choices": [
            {"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": logprobs}
        ],
        "usage": usage,
    }


def _make_handler(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            self.send_body(status, json.dumps(payload).encode("utf-8"), headers)

        def _route(self) -> str:
            """The request path without its query string."""
            return urlsplit(self.path).path.rstrip("/")

        def do_GET(self) -> None:
            if self._route() in ("/v1/models", "/models"):
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": server.model_name, "object": "model", "owned_by": "yoxla"}],
                    },
                )
            else:
                self._send(404, {"error": {"message": "not found", "type": "not_found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self._route() not in ("/v1/chat/completions", "/chat/completions"):
                self._send(404, {"error": {"message": "not found", "type": "not_found"}})
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(400, {"error": {"message": "bad json", "type": "invalid_request_error"}})
                return
            key = prompt_key(body)
            with server._lock:
                server.counts[key] += 1
                attempt = server.counts[key]
                server.bodies.append(body)
                server.queries.append(dict(parse_qsl(urlsplit(self.path).query)))
                auth = self.headers.get("Authorization")
                if auth:
                    server.auth_headers.add(auth)
                server.inflight += 1
                server.peak_inflight = max(server.peak_inflight, server.inflight)
                crowded = server.max_concurrent is not None and server.inflight > server.max_concurrent
            try:
                if crowded:
                    reply = Reply(status=429, retry_after=server.retry_after)
                else:
                    reply = server.reply_for(key, attempt, body)
                    wait = server.latency + reply.delay
                    if wait > 0:
                        time.sleep(wait)
                with server._lock:
                    server.statuses[reply.status] += 1
                if reply.torn:
                    self._tear()
                    return
                if reply.status != 200:
                    headers = {} if reply.retry_after is None else {"Retry-After": f"{reply.retry_after:g}"}
                    kind = "rate_limit_error" if reply.status == 429 else "server_error"
                    self._send(
                        reply.status,
                        {"error": {"message": reply.message or f"injected {reply.status}", "type": kind}},
                        headers,
                    )
                    return
                if reply.raw_body is not None:
                    self.send_body(200, reply.raw_body)
                    return
                if reply.body_error is not None:
                    headers = {} if reply.retry_after is None else {"Retry-After": f"{reply.retry_after:g}"}
                    self._send(200, {"id": "gen-fake", "choices": [], "error": reply.body_error}, headers)
                    return
                self._send(200, _completion_json(server, body, reply))
            finally:  # a dropped connection is ended quietly by QuietHandler.handle
                with server._lock:
                    server.inflight -= 1

        def _tear(self) -> None:
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n"
            self.wfile.write(head + b'{"id": "chatcmpl-fake", "choi')
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    return Handler


def token_logprobs(answer: str, alternatives: int, chunk: int = 3) -> list[dict[str, Any]]:
    """Token log-probabilities for ``answer`` in the OpenAI shape: the answer cut into tokens of
    ``chunk`` characters, each with ``alternatives`` alternatives (itself first)."""
    out: list[dict[str, Any]] = []
    for i in range(0, len(answer), chunk):
        token = answer[i : i + chunk]
        top = [{"token": token, "logprob": -0.05, "bytes": list(token.encode("utf-8"))}]
        for j in range(1, alternatives):
            alt = f"<alt{j}>"
            top.append({"token": alt, "logprob": -4.0 - j / 10, "bytes": list(alt.encode("utf-8"))})
        out.append({**top[0], "top_logprobs": top})
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Serve scripted answers with a fixed latency on 127.0.0.1.")
    p.add_argument("--latency", type=float, default=0.1)
    p.add_argument("--answer", default="1", help="the answer to a prompt --answers does not name")
    p.add_argument("--answers", metavar="FILE", help="a JSON object: prompt key (last user message) → answer")
    p.add_argument("--deadline", type=float, default=3600.0)
    p.add_argument("--logprobs", action="store_true", help="send token logprobs when a request asks for them")
    args = p.parse_args(argv)
    answers: dict[str, str] = {}
    if args.answers:
        with open(args.answers, encoding="utf-8") as fh:
            answers = {str(k): str(v) for k, v in json.load(fh).items()}
    responder: Responder | None = None
    if args.logprobs:

        def responder(key: str, attempt: int, body: dict[str, Any]) -> Reply:
            answer = answers.get(key, args.answer)
            if not body.get("logprobs"):
                return Reply(content=answer)
            alternatives = min(50, int(body.get("top_logprobs") or 1))
            return Reply(content=answer, logprobs=token_logprobs(answer, alternatives))

    server = FakeServer(
        responder=responder,
        answers=answers,
        default_answer=args.answer,
        latency=args.latency,
        deadline_s=args.deadline,
    ).start()
    print(f"PORT {server.port}", flush=True)
    try:
        while server._httpd is not None:
            time.sleep(0.2)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
