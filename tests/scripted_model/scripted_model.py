#!/usr/bin/env python3
"""A scripted model API for tests and the demo: speaks OpenAI Chat Completions
(POST .../chat/completions) and Anthropic Messages (POST .../messages), streamed (SSE) or not,
and answers each request with the next step of a script instead of thinking.

    python3 scripted_model.py SCRIPT.json [--port N] [--record REQUESTS.jsonl]

It prints `listening on http://127.0.0.1:PORT` once it accepts connections. Every request is
appended to the record file as one JSON line: {"path", "headers", "body", "time"}.

The script is {"replies": [STEP, ...]}; requests take steps in order. A STEP is one of:
  {"text": "...", "tool_calls": [{"id": "c1", "name": "tool", "arguments": {...} or "raw"}],
   "finish": "stop" | "tool_calls" | "length"}     a reply (finish defaults from tool_calls)
  {"status": 429, "headers": {"Retry-After": "1"}, "error": "message"}   an HTTP error
  {"malformed": "text"}                            a 200 answer whose body is this text
  {"hang": true}                                   never answers (until the client goes away)
  {"flood_mb": N}                                  a 200 answer of N MiB that never ends a line
                                                   (an event stream when the request streams)
  {"empty_deltas": true}                           a stream that never ends: an empty delta (a
                                                   ping for Anthropic) every 50 ms, no text, no
                                                   finish, until the client goes away
A streamed reply step may add "then_stall": true: its text is sent, then nothing more (no finish,
no [DONE]) until the client goes away, as a model would that writes the same call until its
output limit.
Any step may add "delay_ms" (wait before answering) and "repeat": true (the step is used for
every later request too). In reply text, {last_tool_result} becomes the content of the last tool
result the request carries.

Like a real server, it counts tokens with its own tokenizer (words and punctuation marks, plus 4
per message; not the one cordon uses) and reports them as `usage`. Script keys beside "replies":
  "context_window": N   requests over N prompt tokens are refused with HTTP 400 the way
                        llama.cpp refuses them (exceed_context_size_error, n_prompt_tokens, n_ctx);
                        they take no step
  "report_window": false   do not answer GET /props with the window (llama.cpp does)
  "summary": "text" or a STEP   the answer to a compaction request (no tools offered, the system
                        prompt starting "You are compacting"); these take no step either
Each record line also has "prompt_tokens" and, for refused requests, "refused": true.
Only the Python standard library is used.
"""

import argparse
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Script:
    def __init__(self, steps):
        self.steps = steps
        self.next = 0
        self.lock = threading.Lock()

    def take(self):
        with self.lock:
            if self.next >= len(self.steps):
                return {"status": 400, "error": "the script has no more replies"}
            step = self.steps[self.next]
            if not step.get("repeat"):
                self.next += 1
            return step


TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text):
    return len(TOKEN.findall(text or ""))


def message_texts(message):
    content = message.get("content")
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            for key in ("text", "content"):
                if isinstance(block.get(key), str):
                    yield block[key]
            if "input" in block:
                yield json.dumps(block["input"])
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        yield function.get("name", "")
        yield function.get("arguments", "")


def prompt_tokens(body):
    total = count_tokens(json.dumps(body.get("tools", []))) if body.get("tools") else 0
    system = body.get("system")
    if isinstance(system, str):
        total += 4 + count_tokens(system)
    for message in body.get("messages", []):
        total += 4 + sum(count_tokens(text) for text in message_texts(message))
    return total


def is_summary_request(body):
    if body.get("tools"):
        return False
    messages = body.get("messages", [])
    system = body.get("system") or next(
        (m.get("content") for m in messages if m.get("role") == "system"), "")
    return isinstance(system, str) and system.startswith("You are compacting")


def last_tool_result(body, anthropic):
    found = ""
    for message in body.get("messages", []):
        if anthropic:
            content = message.get("content")
            if isinstance(content, list):
                for block in content:
                    if block.get("type") == "tool_result":
                        found = block.get("content", "")
                        if isinstance(found, list):
                            found = "".join(part.get("text", "") for part in found)
        elif message.get("role") == "tool":
            found = message.get("content", "")
    return found


def pieces(text, size=7):
    return [text[i:i + size] for i in range(0, len(text), size)] or []


def arguments_text(call):
    arguments = call.get("arguments", {})
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def finish_of(step):
    if "finish" in step:
        return step["finish"]
    return "tool_calls" if step.get("tool_calls") else "stop"


def completion_tokens(step, text):
    return count_tokens(text) + sum(count_tokens(arguments_text(c)) + 4
                                    for c in step.get("tool_calls") or [])


def openai_reply(step, text, prompt):
    message = {"role": "assistant", "content": text or None}
    calls = step.get("tool_calls") or []
    if calls:
        message["tool_calls"] = [
            {"id": c.get("id", f"call_{i + 1}"), "type": "function",
             "function": {"name": c["name"], "arguments": arguments_text(c)}}
            for i, c in enumerate(calls)]
    return {"id": "chatcmpl-scripted", "object": "chat.completion", "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_of(step)}],
            "usage": {"prompt_tokens": prompt,
                      "completion_tokens": completion_tokens(step, text)}}


def openai_events(step, text, prompt, with_usage):
    def chunk(delta, finish=None):
        return {"id": "chatcmpl-scripted", "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    yield chunk({"role": "assistant", "content": ""})
    for piece in pieces(text):
        yield chunk({"content": piece})
    for index, call in enumerate(step.get("tool_calls") or []):
        call_id = call.get("id", f"call_{index + 1}")
        yield chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                     "function": {"name": call["name"], "arguments": ""}}]})
        for piece in pieces(arguments_text(call)):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, finish_of(step))
    if with_usage:
        yield {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "choices": [],
               "usage": {"prompt_tokens": prompt,
                         "completion_tokens": completion_tokens(step, text)}}


ANTHROPIC_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def anthropic_blocks(step, text):
    blocks = []
    if text:
        blocks.append({"type": "text", "text": text})
    for index, call in enumerate(step.get("tool_calls") or []):
        arguments = call.get("arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                arguments = {}
        blocks.append({"type": "tool_use", "id": call.get("id", f"toolu_{index + 1}"),
                       "name": call["name"], "input": arguments})
    return blocks


def anthropic_reply(step, text, prompt):
    return {"id": "msg_scripted", "type": "message", "role": "assistant", "model": "scripted",
            "content": anthropic_blocks(step, text),
            "stop_reason": ANTHROPIC_STOP.get(finish_of(step), finish_of(step)),
            "usage": {"input_tokens": prompt, "output_tokens": completion_tokens(step, text)}}


def anthropic_events(step, text, prompt):
    yield "message_start", {"type": "message_start", "message": {
        "id": "msg_scripted", "type": "message", "role": "assistant", "content": [],
        "model": "scripted", "stop_reason": None,
        "usage": {"input_tokens": prompt, "output_tokens": 1}}}
    index = 0
    if text:
        yield "content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": {"type": "text", "text": ""}}
        for piece in pieces(text):
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "text_delta", "text": piece}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    for number, call in enumerate(step.get("tool_calls") or []):
        yield "content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": {"type": "tool_use",
                                                        "id": call.get("id", f"toolu_{number + 1}"),
                                                        "name": call["name"], "input": {}}}
        for piece in pieces(arguments_text(call)):
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "input_json_delta",
                                                    "partial_json": piece}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    yield "ping", {"type": "ping"}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": ANTHROPIC_STOP.get(finish_of(step))},
                            "usage": {"output_tokens": completion_tokens(step, text)}}
    yield "message_stop", {"type": "message_stop"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script = None
    record = None
    record_lock = threading.Lock()
    window = None
    report_window = True
    summary = None

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path.rstrip("/").endswith("/props") and self.window and self.report_window:
            self.send_whole(json.dumps({"default_generation_settings": {
                "n_ctx": self.window}}).encode(), "application/json")
            return
        self.send_error(404)

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        anthropic = self.path.rstrip("/").endswith("/messages")
        prompt = prompt_tokens(body)
        refused = bool(self.window and prompt > self.window)
        if self.record:
            headers = {k.lower(): v for k, v in self.headers.items()
                       if k.lower() in ("authorization", "x-api-key", "anthropic-version",
                                        "accept", "content-type")}
            record = {"path": self.path, "headers": headers, "body": body,
                      "time": time.time(), "prompt_tokens": prompt}
            if refused:
                record["refused"] = True
            with self.record_lock, open(self.record, "a") as out:
                out.write(json.dumps(record) + "\n")
        if refused:
            step = {"status": 400, "context": True}
        elif is_summary_request(body):
            step = self.summary if isinstance(self.summary, dict) else {
                "text": self.summary or "Summary: the agent has been reading files."}
        else:
            step = self.script.take()
        if step.get("delay_ms"):
            time.sleep(step["delay_ms"] / 1000)
        if step.get("hang"):
            time.sleep(3600)
            return
        if step.get("context"):
            payload = json.dumps({"error": {
                "code": 400, "type": "exceed_context_size_error",
                "message": "the request exceeds the available context size, try increasing it",
                "n_prompt_tokens": prompt, "n_ctx": self.window}}).encode()
            self.send_whole(payload, "application/json", 400)
            return
        if "status" in step:
            payload = json.dumps({"error": {"message": step.get("error", "scripted failure"),
                                            "type": "scripted_error"}}).encode()
            self.send_response(step["status"])
            for name, value in step.get("headers", {}).items():
                self.send_header(name, value)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        if step.get("empty_deltas"):
            self.empty_deltas(anthropic)
            return
        if "flood_mb" in step:
            self.flood(step["flood_mb"], bool(body.get("stream")))
            return
        if "malformed" in step:
            self.send_whole(step["malformed"].encode(), "application/json")
            return
        text = step.get("text", "").replace("{last_tool_result}",
                                            last_tool_result(body, anthropic))
        if body.get("stream"):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            if anthropic:
                for name, data in anthropic_events(step, text, prompt):
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
            else:
                with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                for data in openai_events(step, text, prompt, with_usage):
                    finishing = data["choices"] and data["choices"][0]["finish_reason"]
                    if step.get("then_stall") and finishing:
                        time.sleep(3600)
                        return
                    self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
            self.close_connection = True
            return
        reply = (anthropic_reply(step, text, prompt) if anthropic
                 else openai_reply(step, text, prompt))
        self.send_whole(json.dumps(reply).encode(), "application/json")

    def flood(self, mebibytes, stream):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream" if stream else "application/json")
        self.send_header("connection", "close")
        self.end_headers()
        chunk = (b"data: " if stream else b"") + b"x" * (1 << 20)
        try:
            for _ in range(mebibytes):
                self.wfile.write(chunk)
                chunk = b"x" * (1 << 20)
        except OSError:
            pass
        self.close_connection = True

    def empty_deltas(self, anthropic):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        if anthropic:
            event = b'event: ping\ndata: {"type": "ping"}\n\n'
        else:
            event = (b'data: {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", '
                     b'"choices": [{"index": 0, "delta": {}, "finish_reason": null}]}\n\n')
        try:
            while True:
                self.wfile.write(event)
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:
            pass
        self.close_connection = True

    def send_whole(self, payload, content_type, status=200):
        try:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up waiting (a timeout test)


class Server(ThreadingHTTPServer):
    # A client that hangs up mid-answer (cordon stopping a reply early, a test's timeout) is
    # normal here, not worth a traceback.
    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--record")
    args = parser.parse_args()
    with open(args.script) as f:
        script = json.load(f)
    Handler.script = Script(script["replies"])
    Handler.window = script.get("context_window")
    Handler.report_window = script.get("report_window", True)
    Handler.summary = script.get("summary")
    Handler.record = args.record
    server = Server(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
