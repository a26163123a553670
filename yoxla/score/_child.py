"""The worker process that runs a suite's Python (graders, preprocessors).

Started by :mod:`yoxla.score.worker` as ``python -s -P -B _child.py MEMORY_MB``, in a fresh
temporary folder, with an allow-listed environment. Standard library only: it never imports
``yoxla`` or anything of the parent's state.

Protocol: one JSON object per line. The parent writes requests on stdin; the child answers
on the original stdout, which is kept apart (user ``print`` goes to stderr). Requests:

* ``{"op": "load", "source": ..., "filename": ...}`` -> ``{"ok": true}`` or an error;
* ``{"op": "call", "fn": [names], "args": [...], "timeout": s, "ctx": bool}`` -> one result;
* ``{"op": "map", "fn": [names], "args": [[...], ...], "timeout": s, "ctx": bool}`` -> one
  result line per element, in order (``{"i": k, "ok": ..., ...}``), then ``{"done": n}``.

A result is ``{"ok": true, "value": ...}`` or ``{"ok": false, "error": "..."}``. While a
function runs, ``ctx.responses_create(**request)`` writes ``{"op": "judge", "i": k,
"request": {...}}`` and waits for the parent's ``{"ok": true, "response": {...}}``.

A soft per-call time limit (SIGALRM) turns a slow call into an error and keeps the process;
the parent also keeps a hard deadline and kills the process if the soft one does not fire
(code stuck in C). ``RLIMIT_AS`` turns a huge allocation into a ``MemoryError``.

Before any user code runs, the process (Linux) becomes a child subreaper, so what the code
starts stays below it even after ``setsid`` and a double fork (the parent ends the whole tree),
drops every capability (bounding set included) and sets ``no_new_privs``: it cannot read a
non-dumpable parent's ``/proc`` entries, nor regain privileges by running a program.
"""

import ctypes
import inspect
import io
import json
import os
import resource
import signal
import sys
import traceback

MAX_ERROR = 2000


class CallTimeout(BaseException):  # a BaseException, so `except Exception` in user code cannot eat it
    pass


def _on_alarm(signum, frame):
    raise CallTimeout()


def _default(obj):
    item = getattr(obj, "item", None)  # numpy scalars
    if callable(item):
        return item()
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON data")


def _error_text(exc, filename):
    """Type, message and the line of user code where it happened."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == filename:
            line = frame.lineno
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if line is not None:
        text += f" (line {line})"
    return text[:MAX_ERROR]


class Response(dict):
    """A judge response: a dict whose keys also read as attributes (``r.output_text``)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class Child:
    def __init__(self, proto_in, proto_out):
        self.proto_in = proto_in
        self.proto_out = proto_out
        self.namespace = None
        self.filename = "<suite code>"
        self.index = 0
        self.accepts = {}  # (function, arity) -> does it take ctx as its last argument?

    # protocol ---------------------------------------------------------------------------------
    def send(self, text):
        self.proto_out.write(text + "\n")
        self.proto_out.flush()

    def send_obj(self, obj):
        self.send(json.dumps(obj, ensure_ascii=False))

    def responses_create(self, **request):
        """Ask the parent for a judge model's response (replayed from storage, or live)."""
        remaining = signal.setitimer(signal.ITIMER_REAL, 0)[0]  # the judge's time is not ours
        try:
            self.send(json.dumps({"op": "judge", "i": self.index, "request": request}, default=_default))
            line = self.proto_in.readline()
            if not line:
                raise SystemExit(0)
            reply = json.loads(line)
        finally:
            if remaining > 0:
                signal.setitimer(signal.ITIMER_REAL, remaining)
        if not reply.get("ok"):
            raise RuntimeError(reply.get("error") or "the judge request failed")
        return Response(reply.get("response") or {})

    # operations -------------------------------------------------------------------------------
    def load(self, req):
        self.filename = req.get("filename") or "<suite code>"
        namespace = {"__name__": "suite_code", "__file__": self.filename, "__builtins__": __builtins__}
        try:
            code = compile(req["source"], self.filename, "exec")
            exec(code, namespace)
        except BaseException as exc:
            return {"ok": False, "error": _error_text(exc, self.filename)}
        self.namespace = namespace
        return {"ok": True}

    def function(self, names):
        if self.namespace is None:
            return None, "no code is loaded"
        for name in names:
            fn = self.namespace.get(name)
            if callable(fn):
                return fn, None
        return None, "the code defines none of " + ", ".join(f"{n}()" for n in names)

    def invoke(self, fn, args, timeout, with_ctx):
        key = (fn, len(args) + 1)
        if with_ctx and key not in self.accepts:
            self.accepts[key] = _accepts(fn, len(args) + 1)
        if with_ctx and self.accepts[key]:
            args = [*args, self]
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            value = fn(*args)
            signal.setitimer(signal.ITIMER_REAL, 0)
        except CallTimeout:
            return {"ok": False, "error": f"timed out after {timeout:g} s", "timeout": True}
        except BaseException as exc:
            signal.setitimer(signal.ITIMER_REAL, 0)
            return {"ok": False, "error": _error_text(exc, self.filename)}
        return {"ok": True, "value": value}

    def encode(self, result, extra=None):
        body = dict(extra or {}, **result)
        try:
            return json.dumps(body, ensure_ascii=False, allow_nan=True, default=_default)
        except (TypeError, ValueError, RecursionError, OverflowError) as exc:
            bad = dict(extra or {}, ok=False, error=f"the result is not JSON data ({exc})"[:MAX_ERROR])
            return json.dumps(bad)

    def call(self, req):
        fn, problem = self.function(req["fn"])
        if fn is None:
            self.send_obj({"ok": False, "error": problem})
            return
        self.index = 0
        self.send(self.encode(self.invoke(fn, req["args"], req["timeout"], req.get("ctx", False))))

    def map(self, req):
        fn, problem = self.function(req["fn"])
        args_list = req["args"]
        for i, args in enumerate(args_list):
            self.index = i
            if fn is None:
                self.send_obj({"i": i, "ok": False, "error": problem})
                continue
            result = self.invoke(fn, args, req["timeout"], req.get("ctx", False))
            self.send(self.encode(result, {"i": i}))
        self.send_obj({"done": len(args_list)})

    def serve(self):
        while True:
            line = self.proto_in.readline()
            if not line:
                return
            req = json.loads(line)
            op = req.get("op")
            if op == "load":
                self.send_obj(self.load(req))
            elif op == "call":
                self.call(req)
            elif op == "map":
                self.map(req)
            elif op == "exit":
                return
            else:
                self.send_obj({"ok": False, "error": f"unknown operation {op!r}"})


def _accepts(fn, n):
    """Does ``fn`` take ``n`` positional arguments (the extra one being ctx)?"""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return any(p.kind == p.VAR_POSITIONAL for p in params) or len(positional) >= n


PR_CAPBSET_DROP = 24
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
CAP_VERSION_3 = 0x20080522


def harden():
    """Subreaper, no capabilities, no new privileges (Linux; each step is best effort)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as fh:
            last = int(fh.read().strip())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable (two words each): none
    libc.capset(header, data)
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def main():
    harden()
    memory_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    if memory_mb > 0:
        limit = memory_mb * 1024 * 1024
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ValueError, OSError):
            pass
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass
    signal.signal(signal.SIGALRM, _on_alarm)
    # The protocol keeps the original stdin/stdout; user code sees stdout -> stderr, no stdin.
    proto_out = io.TextIOWrapper(os.fdopen(os.dup(1), "wb"), encoding="utf-8", newline="\n")
    proto_in = io.TextIOWrapper(os.fdopen(os.dup(0), "rb"), encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull, encoding="utf-8")
    Child(proto_in, proto_out).serve()


if __name__ == "__main__":
    main()
