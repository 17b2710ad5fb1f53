#!/usr/bin/env python3
"""xg-fake-provider: a scripted model on a loopback port, for testing xg
and what is built on it without a key or a network.  xg-fake-provider(1)
is the reference: the options, the script's steps, the request log.

It plays each request the next step of the script (NDJSON), in the wire
kind the request's path names, and reads the script again whenever the
file changes.  xg's own tests drive it through tests/lib/fake-provider.bash,
make demo through share/xg/demo/run.  Python 3's standard library is all
it needs.  The Makefile makes bin/xg-fake-provider from this file, with the
version put in.
"""
import hashlib
import http.server
import json
import os
import signal
import socket
import struct
import sys
import threading
import time

VERSION = "@VERSION@"
ME = "xg-fake-provider"
SECRET_HEADERS = ("authorization", "x-api-key", "api-key", "proxy-authorization")


# A context overflow as each wire kind's API words it.
OVERFLOW = {
    "openai-chat": {"error": {"message": "This model's maximum context length is 8192 tokens.",
                              "type": "invalid_request_error", "code": "context_length_exceeded"}},
    "openai-responses": {"error": {"message": "Your input exceeds the context window of this model.",
                                   "type": "invalid_request_error",
                                   "code": "context_length_exceeded"}},
    "anthropic-messages": {"type": "error", "error": {"type": "invalid_request_error",
                           "message": "prompt is too long: 210000 tokens > 200000 maximum"}},
}


# The "type" of an error body, by status, as the APIs name it.
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
               403: "permission_error", 404: "not_found_error", 413: "request_too_large",
               429: "rate_limit_error", 529: "overloaded_error"}


def fault_body(kind, status, message):
    """An error body in the wire kind's own form."""
    etype = ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    message = message or "%s: a scripted HTTP %d" % (ME, status)
    if kind == "anthropic-messages":
        return {"type": "error", "error": {"type": etype, "message": message}}
    return {"error": {"message": message, "type": etype, "code": None}}


class Reset(Exception):
    pass


class ScriptError(Exception):
    pass


def read_steps(path):
    """The steps of the script file, each as (line number, step)."""
    steps = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                step = json.loads(line)
            except ValueError as e:
                raise ScriptError("%s:%d: not JSON: %s" % (path, n, e))
            if not isinstance(step, dict):
                raise ScriptError("%s:%d: a step is a JSON object" % (path, n))
            calls = step.get("tool_calls", [])
            if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
                raise ScriptError("%s:%d: \"tool_calls\" is a list of objects" % (path, n))
            for i, c in enumerate(calls):
                c.setdefault("id", "call_%d" % i)
                c.setdefault("name", "tool")
            steps.append((n, step))
    return steps


class Script:
    """The steps not yet used.  Before each request the file is looked at
    again: when its inode, size or mtime changed, it is read afresh and its
    steps start over from the first."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.seen = self.stamp()
        self.steps = read_steps(path)
        self.error = None

    def stamp(self):
        st = os.stat(self.path)
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def refresh(self):
        try:
            seen = self.stamp()
        except OSError:
            return  # gone for now (a writer replacing it): keep what was read
        if seen == self.seen:
            return
        self.seen = seen
        try:
            self.steps, self.error = read_steps(self.path), None
        except (OSError, UnicodeDecodeError, ScriptError) as e:
            self.steps, self.error = [], str(e)
            sys.stderr.write("%s: %s\n" % (ME, e))

    @staticmethod
    def fits(step, body):
        if "when" in step and step["when"] not in body:
            return False
        return not ("unless" in step and step["unless"] in body)

    def next(self, body=""):
        """(line, step) for a request with this body, None when none is
        left; raises ScriptError while the file is not a script."""
        with self.lock:
            self.refresh()
            if self.error:
                raise ScriptError(self.error)
            for i, (n, step) in enumerate(self.steps):
                if not self.fits(step, body):
                    continue
                left = step.get("repeat", 1) - 1
                if left > 0:
                    self.steps[i] = (n, dict(step, repeat=left))
                    return n, step
                return self.steps.pop(i)
            return None


def pieces(s, n):
    n = max(1, n)
    return [s[i:i + n] for i in range(0, len(s), n)]


def sse(data, event=None):
    head = "event: %s\n" % event if event else ""
    return (head + "data: " + json.dumps(data, ensure_ascii=False) + "\n\n").encode()


def usage_of(step):
    u = {"input": 10, "cached_input": 0, "cache_write": 0, "output": 5, "reasoning": 0}
    u.update(step.get("usage", {}))
    return u


def finish_of(step):
    if step.get("finish"):
        return step["finish"]
    return "tool_calls" if step.get("tool_calls") else "stop"


def chat_events(step, model):
    dialect = step.get("dialect", "openai")
    n = step.get("chunk", 8)
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model}

    def chunk(delta, finish=None, **extra):
        o = dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])
        o.update(extra)
        return b"data: " + json.dumps(o).encode() + b"\n\n"

    out = [chunk({"role": "assistant", "content": ""})]
    rfield = "reasoning" if dialect == "ollama" else "reasoning_content"
    for p in pieces(step.get("reasoning", ""), n):
        out.append(chunk({rfield: p}))
    for p in pieces(step.get("text", ""), n):
        out.append(chunk({"content": p}))
    calls = step.get("tool_calls", [])
    if dialect == "ollama" and calls:
        out.append(chunk({"tool_calls": [
            {"index": i, "id": c["id"], "type": "function",
             "function": {"name": c["name"], "arguments": json.dumps(c.get("args", {}))}}
            for i, c in enumerate(calls)]}))
    else:
        for i, c in enumerate(calls):
            args = pieces(json.dumps(c.get("args", {})), n)
            first = ""
            if dialect == "llama.cpp":
                first = args.pop(0) if args else ""
            out.append(chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                              "function": {"name": c["name"], "arguments": first}}]}))
            for p in args:
                out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]}))
    if "stream_error" in step:
        out.append(b"data: " + json.dumps({"error": step["stream_error"]}).encode() + b"\n\n")
        return out
    u = usage_of(step)
    fin = finish_of(step) if step.get("finish_reason", True) else None
    if dialect == "llama.cpp":
        out.append(chunk({}, fin, timings={
            "prompt_n": u["input"] - u["cached_input"], "cache_n": u["cached_input"],
            "predicted_n": u["output"]}))
    else:
        out.append(chunk({}, fin))
        out.append(b"data: " + json.dumps(dict(base, choices=[], usage={
            "prompt_tokens": u["input"], "completion_tokens": u["output"],
            "total_tokens": u["input"] + u["output"],
            "prompt_tokens_details": {"cached_tokens": u["cached_input"]},
            "completion_tokens_details": {"reasoning_tokens": u["reasoning"]}})).encode() + b"\n\n")
    if step.get("done", True):
        out.append(b"data: [DONE]\n\n")
    return out


def responses_events(step, model):
    n = step.get("chunk", 8)
    seq = [0]
    out = []

    def ev(o):
        o["sequence_number"] = seq[0]
        seq[0] += 1
        out.append(sse(o, o["type"]))

    resp = {"id": "resp_fake", "object": "response", "status": "in_progress", "model": model,
            "output": [], "usage": None}
    ev({"type": "response.created", "response": resp})
    ev({"type": "response.in_progress", "response": resp})
    idx = 0
    if step.get("reasoning"):
        item = {"id": "rs_fake", "type": "reasoning", "summary": []}
        ev({"type": "response.output_item.added", "output_index": idx, "item": item})
        for p in pieces(step["reasoning"], n):
            ev({"type": "response.reasoning_summary_text.delta", "item_id": "rs_fake",
                "output_index": idx, "summary_index": 0, "delta": p})
        ev({"type": "response.output_item.done", "output_index": idx,
            "item": dict(item, summary=[{"type": "summary_text", "text": step["reasoning"]}],
                         encrypted_content=step.get("signature", "enc-fake"))})
        idx += 1
    if step.get("text"):
        item = {"id": "msg_fake", "type": "message", "role": "assistant", "status": "in_progress",
                "content": []}
        ev({"type": "response.output_item.added", "output_index": idx, "item": item})
        for p in pieces(step["text"], n):
            ev({"type": "response.output_text.delta", "item_id": "msg_fake", "output_index": idx,
                "content_index": 0, "delta": p})
        ev({"type": "response.output_item.done", "output_index": idx,
            "item": dict(item, status="completed",
                         content=[{"type": "output_text", "text": step["text"]}])})
        idx += 1
    for i, c in enumerate(step.get("tool_calls", [])):
        fid = "fc_fake_%d" % i
        args = json.dumps(c.get("args", {}))
        item = {"id": fid, "type": "function_call", "status": "in_progress",
                "call_id": c["id"], "name": c["name"], "arguments": ""}
        ev({"type": "response.output_item.added", "output_index": idx, "item": item})
        for p in pieces(args, n):
            ev({"type": "response.function_call_arguments.delta", "item_id": fid,
                "output_index": idx, "delta": p})
        ev({"type": "response.function_call_arguments.done", "item_id": fid,
            "output_index": idx, "arguments": args})
        ev({"type": "response.output_item.done", "output_index": idx,
            "item": dict(item, status="completed", arguments=args)})
        idx += 1
    if "stream_error" in step:
        ev(dict({"type": "error"}, **step["stream_error"]))
        return out
    u = usage_of(step)
    usage = {"input_tokens": u["input"], "input_tokens_details": {"cached_tokens": u["cached_input"]},
             "output_tokens": u["output"],
             "output_tokens_details": {"reasoning_tokens": u["reasoning"]},
             "total_tokens": u["input"] + u["output"]}
    fin = finish_of(step)
    if fin in ("length", "content_filter"):
        reason = "max_output_tokens" if fin == "length" else "content_filter"
        ev({"type": "response.incomplete", "response": dict(
            resp, status="incomplete", incomplete_details={"reason": reason}, usage=usage)})
    else:
        ev({"type": "response.completed", "response": dict(resp, status="completed", usage=usage)})
    return out


def anthropic_events(step, model):
    n = step.get("chunk", 8)
    u = usage_of(step)
    out = []

    def ev(o):
        out.append(sse(o, o["type"]))

    ev({"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "usage": {
            "input_tokens": u["input"] - u["cached_input"] - u["cache_write"],
            "cache_read_input_tokens": u["cached_input"],
            "cache_creation_input_tokens": u["cache_write"], "output_tokens": 1}}})
    ev({"type": "ping"})
    idx = 0
    if step.get("reasoning"):
        ev({"type": "content_block_start", "index": idx,
            "content_block": {"type": "thinking", "thinking": ""}})
        for p in pieces(step["reasoning"], n):
            ev({"type": "content_block_delta", "index": idx,
                "delta": {"type": "thinking_delta", "thinking": p}})
        ev({"type": "content_block_delta", "index": idx,
            "delta": {"type": "signature_delta", "signature": step.get("signature", "sig-fake")}})
        ev({"type": "content_block_stop", "index": idx})
        idx += 1
    if step.get("text"):
        ev({"type": "content_block_start", "index": idx, "content_block": {"type": "text", "text": ""}})
        for p in pieces(step["text"], n):
            ev({"type": "content_block_delta", "index": idx, "delta": {"type": "text_delta", "text": p}})
        ev({"type": "content_block_stop", "index": idx})
        idx += 1
    for c in step.get("tool_calls", []):
        ev({"type": "content_block_start", "index": idx, "content_block": {
            "type": "tool_use", "id": c["id"], "name": c["name"], "input": {}}})
        ev({"type": "content_block_delta", "index": idx,
            "delta": {"type": "input_json_delta", "partial_json": ""}})
        for p in pieces(json.dumps(c.get("args", {})), n):
            ev({"type": "content_block_delta", "index": idx,
                "delta": {"type": "input_json_delta", "partial_json": p}})
        ev({"type": "content_block_stop", "index": idx})
        idx += 1
    if "stream_error" in step:
        ev({"type": "error", "error": step["stream_error"]})
        return out
    stop = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use",
            "refusal": "refusal", "content_filter": "refusal"}[finish_of(step)]
    ev({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": u["output"]}})
    ev({"type": "message_stop"})
    return out


KINDS = {"openai-chat": chat_events, "openai-responses": responses_events,
         "anthropic-messages": anthropic_events}


def kind_of(path):
    path = path.split("?")[0].rstrip("/")
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/messages"):
        return "anthropic-messages"
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "xg-fake-provider/1"

    def log_message(self, fmt, *args):
        pass

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.lock:
            self.server.conns += 1
            self.conn_id = self.server.conns
        self.on_conn = 0

    def received_key(self):
        auth = self.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:]
        return self.headers.get("x-api-key") or self.headers.get("api-key")

    def auth_state(self):
        want = os.environ.get("FAKE_PROVIDER_KEY")
        got = self.received_key()
        return "unchecked" if want is None else "none" if not got else \
            "ok" if got == want else "wrong"

    def log_request_line(self, kind, body, arrived, auth, line=None):
        headers = {}
        for k, v in self.headers.items():
            k = k.lower()
            headers[k] = "<redacted>" if k in SECRET_HEADERS else v
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = body.decode("utf-8", "replace")
        self.on_conn += 1
        with self.server.lock:
            self.server.requests += 1
            self.n = self.server.requests
            rec = {"n": self.server.requests, "method": self.command, "path": self.path,
                   "kind": kind, "conn": self.conn_id, "on_conn": self.on_conn,
                   "peer_port": self.client_address[1], "headers": headers, "auth": auth,
                   "body": parsed, "sha256": hashlib.sha256(body).hexdigest(),
                   "t": arrived, "step": line}
            if self.server.log:
                with open(self.server.log, "a", encoding="utf-8") as f:
                    f.write(json.dumps(rec, ensure_ascii=False) + "\n")

    def do_GET(self):
        self.server.last_request = time.time()
        if not self.path.split("?")[0].rstrip("/").endswith("/v1/models"):
            self.plain(404, {"error": {"message": ME + ": only POST and GET .../v1/models",
                                       "type": "not_found"}})
            return
        auth = self.auth_state()
        self.log_request_line("models", b"", time.time(), auth)
        if auth in ("none", "wrong"):
            self.plain(401, {"error": {"message": "Incorrect API key provided",
                                       "type": "invalid_request_error", "code": "invalid_api_key"}})
            return
        if isinstance(self.server.models, dict):
            self.plain(200, self.server.models)
            return
        data = [m if isinstance(m, dict) else {"id": m, "object": "model", "owned_by": "fake"}
                for m in self.server.models]
        self.plain(200, {"object": "list", "data": data})

    def do_POST(self):
        self.server.last_request = time.time()
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length) if length else b""
        arrived = time.time()  # the whole request is in: what "t" says
        kind = kind_of(self.path)
        auth = self.auth_state()
        got = problem = None
        if auth not in ("none", "wrong"):
            try:
                got = self.server.script.next(body.decode("utf-8", "replace"))
            except ScriptError as e:
                problem = str(e)
        self.log_request_line(kind, body, arrived, auth, got[0] if got else None)
        if auth in ("none", "wrong"):
            self.plain(401, {"error": {"message": "Incorrect API key provided: %s" %
                                       (self.received_key() or ""),
                                       "type": "invalid_request_error", "code": "invalid_api_key"}})
            return
        if problem:
            self.plain(500, {"error": {"message": ME + ": " + problem, "type": "script_error"}})
            return
        if got is None:
            self.plain(418, {"error": {"message": ME + ": the script is used up",
                                       "type": "invalid_request_error"}})
            return
        step = got[1]
        try:
            body_json = json.loads(body)
        except ValueError:
            body_json = {}
        try:
            self.serve(step, kind or step.get("kind", "openai-chat"), body_json)
        except Reset:
            self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        if self.server.served:
            with self.server.lock, open(self.server.served, "a", encoding="utf-8") as f:
                f.write(json.dumps({"n": self.n, "t": time.time()}) + "\n")

    def plain(self, status, body, headers=None, content_type="application/json", close=False):
        data = body if isinstance(body, bytes) else \
            (body if isinstance(body, str) else json.dumps(body)).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def serve(self, step, kind, req):
        close = step.get("close", False)
        if step.get("wait_ms"):
            time.sleep(step["wait_ms"] / 1000.0)
        if step.get("overflow"):
            self.plain(400, OVERFLOW[kind], close=close)
            return
        if "status" in step and "raw" not in step and "raw_file" not in step:
            body = step["body"] if "body" in step else \
                fault_body(kind, step["status"], step.get("message"))
            if step.get("echo_key"):
                body = {"error": {"message": "bad key %s" % (self.received_key() or ""),
                                  "type": "authentication_error"}}
            self.plain(step["status"], body, step.get("headers"),
                       step.get("content_type", "application/json"), close)
            return
        if "garbage" in step:
            self.plain(step.get("status", 200), step["garbage"], step.get("headers"),
                       step.get("content_type", "text/html"), close)
            return
        if "raw" in step or "raw_file" in step:
            if "raw_file" in step:
                with open(step["raw_file"], "rb") as f:
                    events = [f.read()]
            else:
                events = [step["raw"].encode()]
        else:
            events = KINDS[kind](step, req.get("model", "fake-model"))
        self.stream(step, events, close)

    def stream(self, step, events, close):
        self.send_response(step.get("status", 200))
        self.send_header("Content-Type", step.get("content_type", "text/event-stream"))
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in step.get("headers", {}).items():
            self.send_header(k, v)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.flush()
        reset = step.get("reset_after")
        stall = [step.get("stall")]
        stall_after = step.get("stall_after", 0)
        delay = step.get("delay_ms", 0) / 1000.0
        sent = [0]

        def triggers():
            if stall[0] is not None and sent[0] == stall_after:
                time.sleep(stall[0])
                stall[0] = None
            if reset is not None and sent[0] >= reset:
                self.reset()

        def send(piece):
            while piece:
                triggers()
                limit = len(piece)
                if stall[0] is not None and stall_after > sent[0]:
                    limit = min(limit, stall_after - sent[0])
                if reset is not None:
                    limit = min(limit, reset - sent[0])
                self.chunk(piece[:limit])
                sent[0] += limit
                piece = piece[limit:]

        for ev in events:
            send(ev)
            if delay:
                time.sleep(delay)
        triggers()
        if reset is not None:
            self.reset()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def chunk(self, data):
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

    def reset(self):
        # SO_LINGER with a zero timeout turns close() into a TCP reset.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        raise Reset()


USAGE = ("usage: xg-fake-provider --script file [--port port] [--port-file file] [--log file]"
         " [--served file] [--models file] [--idle-exit seconds]")
HELP = USAGE + """

Play a model from a script on a loopback port, for tests without a key.

      --script file          the steps, one JSON object a line (read again when it changes)
      --port port            listen on this port of 127.0.0.1 (default 0: one the system picks)
      --port-file file       write the port number to file once listening
      --log file             append one JSON line a request to file
      --served file          append a line to file as each POST's reply ends
      --models file          a file of JSON: the models GET .../v1/models lists
      --idle-exit seconds    exit after seconds without a request (default: never)
  -h, --help                 print this help and exit
      --version              print the version and exit

See xg-fake-provider(1)."""
VALUED = ("--script", "--port", "--port-file", "--log", "--served", "--models", "--idle-exit")


def fail(status, msg, usage=False):
    sys.stderr.write("%s: %s\n%s" % (ME, msg, USAGE + "\n" if usage else ""))
    sys.exit(status)


def options(argv):
    opts = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-h", "--help"):
            print(HELP)
            sys.exit(0)
        if arg == "--version":
            print("%s (xg) %s" % (ME, VERSION))
            sys.exit(0)
        name, eq, value = arg.partition("=")
        if name not in VALUED:
            fail(2, ("unknown option '%s'" % name) if arg.startswith("-") else
                 ("takes no operand: '%s'" % arg), True)
        if not eq:
            i += 1
            if i == len(argv):
                fail(2, "option '%s' needs a value" % name, True)
            value = argv[i]
        opts[name] = value
        i += 1
    if "--script" not in opts:
        fail(2, "--script is needed: the steps to play", True)
    try:
        opts["--port"] = int(opts.get("--port", "0"))
        assert 0 <= opts["--port"] <= 65535
    except (ValueError, AssertionError):
        fail(2, "option '--port' needs a port number (0 to 65535), not '%s'" % opts["--port"], True)
    if opts["--port"] == 0 and "--port-file" not in opts:
        fail(2, "give --port or --port-file: otherwise nothing can learn the port", True)
    if "--idle-exit" in opts:
        try:
            opts["--idle-exit"] = float(opts["--idle-exit"])
            assert opts["--idle-exit"] > 0
        except (ValueError, AssertionError):
            fail(2, "option '--idle-exit' needs a number of seconds over 0, not '%s'"
                 % opts["--idle-exit"], True)
    return opts


def read_input(what, fn):
    """fn() for a file named on the command line; a failure exits with
    xg(7)'s status for it."""
    try:
        return fn()
    except FileNotFoundError as e:
        fail(66, "%s: no such file: '%s'" % (what, e.filename))
    except PermissionError as e:
        fail(77, "%s: permission denied: '%s'" % (what, e.filename))
    except (ScriptError, ValueError) as e:
        fail(65, "%s: %s" % (what, e))
    except OSError as e:
        fail(74, "%s: %s" % (what, e))


def main():
    opts = options(sys.argv[1:])
    # ^C ends it as the signal (128+2 to a shell), not with a traceback;
    # where SIGINT is ignored (in the background of a script) it stays so.
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    script = read_input("--script", lambda: Script(opts["--script"]))
    models = ["fake-model"]
    path = opts.get("--models", os.environ.get("FAKE_PROVIDER_MODELS"))
    if path:
        models = read_input("--models", lambda: json.load(open(path, encoding="utf-8")))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", opts["--port"]), Handler)
    except OSError as e:
        fail(74, "cannot listen on 127.0.0.1:%d: %s" % (opts["--port"], e.strerror))
    server.daemon_threads = True
    server.script = script
    server.log = opts.get("--log")
    server.served = opts.get("--served")
    server.models = models
    server.lock = threading.Lock()
    server.conns = server.requests = 0
    server.last_request = time.time()
    try:
        if server.log:
            open(server.log, "a").close()
        if "--port-file" in opts:
            tmp = opts["--port-file"] + ".tmp"
            with open(tmp, "w") as f:
                f.write("%d\n" % server.server_address[1])
            os.rename(tmp, opts["--port-file"])
    except OSError as e:
        fail(74, "%s: %s" % (e.filename, e.strerror))
    idle = opts.get("--idle-exit")

    def watchdog():
        while True:
            time.sleep(min(1.0, idle / 4))
            if time.time() - server.last_request > idle:
                os._exit(0)
    if idle:
        threading.Thread(target=watchdog, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
