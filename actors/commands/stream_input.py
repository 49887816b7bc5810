"""``--input-format stream-json``: user messages as JSON lines on stdin.

Each line is one message, in Claude Code's shape or a shorter one::

    {"type": "user", "message": {"role": "user", "content": "Fix the test"}}
    {"type": "user", "message": {"role": "user",
                                 "content": [{"type": "text", "text": "Fix it"}]}}
    {"type": "user", "text": "Also update the docs"}
    {"type": "interrupt"}
    {"type": "approval", "answer": "yes"}
    {"type": "approval", "request_id": "ap-1a2b3c4d", "answer": "no, use git clean"}

A message starts an input when the session is idle and steers it while it works;
``interrupt`` stops the work after the current step; ``approval`` answers the
oldest open approval request (or the one ``request_id`` names) with ``yes``,
``always``, ``no`` or a reason to say no. The run ends once stdin is
closed and the session is idle. With ``--output-format stream-json`` each message
is acknowledged once the server has it: ``{"type": "input", "action": "submitted"
| "steered" | "interrupted", "text": ...}``. A line that is not such a message ends the run
with exit code 2.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import msgspec
import trio

from actors.commands.errors import EXIT_BAD_INPUT, CommandError
from actors.commands.interact import Follower, UnofferedAnswer, approval_answer
from protocol.client_errors import RequestError
from protocol.wire import ResolveApproval

_decode = msgspec.json.Decoder()


def message_text(line: str, number: int) -> str | None:
    """The text of one stream-json line; None for an interrupt."""
    try:
        message: Any = _decode.decode(line)
    except msgspec.DecodeError as error:
        raise CommandError(f"stdin line {number} is not JSON: {error}", EXIT_BAD_INPUT) from None
    kind = message.get("type") if isinstance(message, dict) else None
    if kind == "interrupt":
        return None
    if kind == "user":
        if isinstance(message.get("text"), str):
            return str(message["text"])
        content = (message.get("message") or {}).get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            parts = [p.get("text", "") for p in content if isinstance(p, dict)]
            if parts and all(isinstance(p, str) for p in parts):
                return "".join(parts)
    raise CommandError(
        f'stdin line {number} is not a stream-json user message (want {{"type": "user", '
        '"message": {"role": "user", "content": "..."}})',
        EXIT_BAD_INPUT,
    )


async def read_stream_json(follower: Follower) -> None:
    """Send each message from stdin to the session; tell the follower when stdin ends."""
    stream = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
    buffer = b""
    number = 0
    async with stream:
        while True:
            chunk = await stream.receive_some()
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                raw, buffer = buffer.split(b"\n", 1)
                number += 1
                await _one(follower, raw.decode(errors="replace").strip(), number)
    if buffer.strip():
        await _one(follower, buffer.decode(errors="replace").strip(), number + 1)
    follower.input_closed()


def approval_message(line: str) -> dict[str, Any] | None:
    """An ``approval`` line's fields; None for any other line."""
    try:
        message: Any = _decode.decode(line)
    except msgspec.DecodeError:
        return None
    if isinstance(message, dict) and message.get("type") == "approval":
        return message
    return None


async def _answer(follower: Follower, message: dict[str, Any], number: int) -> None:
    answer = message.get("answer")
    if not isinstance(answer, str) or not answer.strip():
        raise CommandError(
            f'stdin line {number}: an approval needs "answer": "yes", "always", "rule", "no"'
            " or a reason",
            EXIT_BAD_INPUT,
        )
    pending = follower.outcome.pending_approvals
    wanted = message.get("request_id")
    chosen = next((p for p in pending if wanted in (None, p.request_id)), None)
    if chosen is None:
        print(f"troupe run: stdin line {number}: no open approval request to answer",
              file=sys.stderr, flush=True)  # fmt: skip
        return
    try:
        resolved = approval_answer(answer, chosen.details)
    except UnofferedAnswer as refused:  # the request stays open for another answer
        print(f"troupe run: stdin line {number}: {str(refused).strip('[]')}",
              file=sys.stderr, flush=True)  # fmt: skip
        return
    pending.remove(chosen)
    try:
        await follower.client.request(
            ResolveApproval, session=follower.session, request_id=chosen.request_id,
            **resolved,
        )  # fmt: skip
    except RequestError as error:
        print(f"troupe run: approval {chosen.request_id}: {error}", file=sys.stderr, flush=True)
        return
    if follower.output_format == "stream-json":
        print(json.dumps({"type": "input", "action": "answered", "request_id": chosen.request_id,
                          "text": answer}), flush=True)  # fmt: skip


async def _one(follower: Follower, line: str, number: int) -> None:
    if not line:
        return
    approval = approval_message(line)
    if approval is not None:
        await _answer(follower, approval, number)
        return
    text = message_text(line, number)
    if text is None:
        await follower.interrupt(immediate=False)
        action = "interrupted"
    else:
        action = await follower.send(text)
    if follower.output_format == "stream-json":  # the server has it: say what it became
        print(json.dumps({"type": "input", "action": action, "text": text}), flush=True)
