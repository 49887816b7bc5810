"""What a recorded provider answer says, read straight from its JSON payloads.

This is the conformance tests' reference: a deliberately plain reading of each
format (no SSE parser, no builder, no state machine shared with the adapters),
written from the providers' documentation. Where a provider sends a final summary
(OpenAI Responses' ``response.completed``) the oracle trusts it over the deltas,
so the adapters' delta accumulation is checked against an independent source.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

INVALID = "<invalid arguments>"
STREAMED = "<arguments streamed in pieces>"
"""Gemini's partialArgs: the tests hold the expected arguments for those recordings."""


@dataclass
class Expected:
    text: str = ""
    reasoning: str = ""
    tool_calls: list[tuple[str | None, str, Any]] = field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish: str | None = None
    error: str | None = None
    """The error kind when the stream carries an in-stream error."""


def _args(raw: Any) -> Any:
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str) or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return INVALID
    return value if isinstance(value, dict) else INVALID


def sse_payloads(body: bytes) -> list[tuple[str, str]]:
    """(event name, data) pairs, read with a regex rather than a parser."""
    text = body.decode().replace("\r\n", "\n")
    out = []
    for block in re.split(r"\n\n+", text):
        event, data = "message", []
        for line in block.split("\n"):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            out.append((event, "\n".join(data)))
    return out


def anthropic(payloads: list[Any]) -> Expected:
    blocks: dict[int, dict[str, Any]] = {}
    exp = Expected()
    usage: dict[str, Any] = {}
    for p in payloads:
        kind = p.get("type")
        if kind == "message_start":
            blocks = {}  # started again before it stopped: the first one is void
            usage = dict(p["message"].get("usage") or {})
        elif kind == "message_stop":
            break  # the answer is complete; a recording may append the next step
        elif kind == "content_block_start":
            blocks[p["index"]] = {**p["content_block"], "_json": ""}
        elif kind == "content_block_delta":
            d, b = p["delta"], blocks[p["index"]]
            if d["type"] == "text_delta":
                b["text"] = b.get("text", "") + d["text"]
            elif d["type"] == "thinking_delta":
                b["thinking"] = b.get("thinking", "") + d["thinking"]
            elif d["type"] == "input_json_delta":
                b["_json"] += d["partial_json"]
        elif kind == "message_delta":
            exp.finish = p["delta"].get("stop_reason") or exp.finish
            usage.update({k: v for k, v in (p.get("usage") or {}).items() if v is not None})
        elif kind == "error":
            exp.error = "error"
    for index in sorted(blocks):
        b = blocks[index]
        if b["type"] == "text":
            exp.text += b.get("text", "")
        elif b["type"] == "thinking":
            exp.reasoning += b.get("thinking", "")
        elif b["type"] == "tool_use":
            raw = b["_json"] or (json.dumps(b["input"]) if b.get("input") else "")
            exp.tool_calls.append((b["id"], b["name"], _args(raw)))
    exp.input_tokens = usage.get("input_tokens")
    exp.output_tokens = usage.get("output_tokens")
    exp.finish = {
        "end_turn": "stop",
        "stop_sequence": "stop",
        "max_tokens": "length",
        "tool_use": "tool_calls",
        "refusal": "content_filter",
        None: None,
    }.get(exp.finish, "other")
    return exp


def responses_object(resp: dict[str, Any], exp: Expected | None = None) -> Expected:
    exp = exp or Expected()
    for item in resp.get("output") or ():
        if item["type"] == "message":
            for c in item.get("content") or ():
                if c.get("type") == "output_text":
                    exp.text += c["text"]
        elif item["type"] == "function_call":
            exp.tool_calls.append((item["call_id"], item["name"], _args(item["arguments"])))
        elif item["type"] == "reasoning":
            texts = [s["text"] for s in item.get("summary") or ()]
            texts += [c["text"] for c in item.get("content") or () if c.get("text")]
            exp.reasoning += "\n\n".join(texts)
    usage = resp.get("usage") or {}
    exp.input_tokens = usage.get("input_tokens", 0)
    exp.output_tokens = usage.get("output_tokens", 0)
    status = resp.get("status")
    if status == "completed":
        exp.finish = "tool_calls" if exp.tool_calls else "stop"
    elif status == "incomplete":
        reason = (resp.get("incomplete_details") or {}).get("reason")
        exp.finish = {"max_output_tokens": "length", "content_filter": "content_filter"}.get(
            str(reason), "other"
        )
    else:
        exp.finish = "other"
    return exp


def responses(payloads: list[Any]) -> Expected:
    """Text is what the deltas streamed (some recordings trimmed the deltas but not the
    final summary); everything else comes from the first ``response.completed``."""
    final = None
    items = []
    streamed: dict[str, str] = {}
    for p in payloads:
        if p == "[DONE]":  # OpenRouter ends its Responses streams the Chat way
            continue
        kind = p.get("type")
        if kind in ("response.completed", "response.incomplete"):
            final = p["response"]
            break  # a recording may append the next step's response
        if kind == "response.output_item.done":
            items.append(p["item"])
        elif kind == "response.output_text.delta":
            item_id = p["item_id"]
            streamed[item_id] = streamed.get(item_id, "") + p["delta"]
        elif kind in ("error", "response.failed"):
            return Expected(error="error")
    if final is None:
        return Expected(error="stream")
    if not final.get("output"):  # some recordings trim the summary; use the items
        final = {**final, "output": items}
    exp = responses_object(final)
    if streamed:
        text = ""
        for item in final["output"]:
            if item["type"] == "message":
                summary = "".join(c.get("text", "") for c in item.get("content") or ())
                text += streamed.get(item["id"], summary)
        exp.text = text
    return exp


def chat(payloads: list[Any]) -> Expected:
    exp = Expected()
    calls: dict[int, dict[str, Any]] = {}
    usage: dict[str, Any] = {}
    raw_finish = None
    for p in payloads:
        if p == "[DONE]":
            continue
        if p.get("error"):
            exp.error = "error"
            return exp
        if p.get("usage"):
            usage = p["usage"]
        for choice in p.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            d = choice.get("delta") or {}
            exp.text += d.get("content") or ""
            exp.reasoning += d.get("reasoning_content") or d.get("reasoning") or ""
            for tc in d.get("tool_calls") or ():
                slot = calls.setdefault(tc.get("index", 0), {"id": "", "name": "", "args": ""})
                slot["id"] = slot["id"] or tc.get("id") or ""
                fn = tc.get("function") or {}
                slot["name"] = slot["name"] or fn.get("name") or ""
                slot["args"] += fn.get("arguments") or ""
            raw_finish = choice.get("finish_reason") or raw_finish
    exp.tool_calls = [(c["id"], c["name"], _args(c["args"])) for _, c in sorted(calls.items())]
    exp.input_tokens = usage.get("prompt_tokens", 0)
    exp.output_tokens = usage.get("completion_tokens", 0)
    exp.finish = {
        "stop": "tool_calls" if exp.tool_calls else "stop",
        "length": "length",
        "tool_calls": "tool_calls",
        "content_filter": "content_filter",
        None: "tool_calls" if exp.tool_calls else "other",
    }.get(raw_finish, "other")
    return exp


def gemini(payloads: list[Any]) -> Expected:
    exp = Expected()
    usage: dict[str, Any] = {}
    raw_finish = None
    for p in payloads:
        if p.get("error"):
            exp.error = "error"
            return exp
        usage = p.get("usageMetadata") or usage
        for cand in (p.get("candidates") or ())[:1]:
            for part in (cand.get("content") or {}).get("parts") or ():
                if "functionCall" in part:
                    fc = part["functionCall"]
                    if fc.get("name"):
                        args = STREAMED if fc.get("willContinue") else fc.get("args") or {}
                        exp.tool_calls.append((None, fc["name"], args))
                elif part.get("thought"):
                    exp.reasoning += part.get("text", "")
                else:
                    exp.text += part.get("text", "")
            raw_finish = cand.get("finishReason") or raw_finish
    exp.input_tokens = usage.get("promptTokenCount", 0)
    exp.output_tokens = usage.get("candidatesTokenCount", 0)
    if exp.tool_calls and raw_finish in (None, "STOP"):
        exp.finish = "tool_calls"
    else:
        exp.finish = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter"}.get(
            str(raw_finish), "other"
        )
    return exp


ORACLES = {
    "anthropic": anthropic,
    "openai_responses": responses,
    "openai_chat": chat,
    "gemini": gemini,
}


def expected_stream(wire: str, body: bytes) -> Expected:
    payloads: list[Any] = []
    for _, data in sse_payloads(body):
        if data == "[DONE]":
            payloads.append(data)
            continue
        try:
            payloads.append(json.loads(data))
        except ValueError:
            return Expected(error="stream")
    return ORACLES[wire](payloads)


def expected_complete(wire: str, body: bytes) -> Expected:
    data = json.loads(body)
    if wire == "anthropic":
        events: list[Any] = [{"type": "message_start", "message": {"usage": data["usage"]}}]
        for index, block in enumerate(data["content"]):
            start = dict(block)
            if block["type"] == "tool_use":
                start = {**block, "input": {}}
                events.append(
                    {"type": "content_block_start", "index": index, "content_block": start}
                )
                raw = json.dumps(block["input"])
                delta = {"type": "input_json_delta", "partial_json": raw}
                events.append({"type": "content_block_delta", "index": index, "delta": delta})
            else:
                events.append(
                    {"type": "content_block_start", "index": index, "content_block": start}
                )
        events.append({"type": "message_delta", "delta": {"stop_reason": data.get("stop_reason")}})
        return anthropic(events)
    if wire == "openai_responses":
        return responses_object(data)
    if wire == "openai_chat":
        msg = data["choices"][0]["message"]
        delta = {
            "content": msg.get("content"),
            "reasoning_content": msg.get("reasoning_content"),
            "tool_calls": [{**tc, "index": i} for i, tc in enumerate(msg.get("tool_calls") or ())],
        }
        chunk = {
            "choices": [
                {
                    "index": 0,
                    "delta": delta,
                    "finish_reason": data["choices"][0].get("finish_reason"),
                }
            ]
        }
        return chat([chunk, {"usage": data.get("usage") or {}}])
    return gemini([data])
