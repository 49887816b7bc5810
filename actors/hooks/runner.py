"""Running one hook: its command in the session's environment, under the session's
sandbox and environment allowlist, with the event's JSON on stdin.

The environment runs commands with ``bash -c`` and no stdin, so the JSON is given
as a here-document with a random delimiter (the JSON is one line starting with
``{``, so it can never end the document early). A command line is limited in
length, so long strings in the input (a large file a write carries, a tool's
long output) are cut, with a marker, to keep the input under :data:`INPUT_LIMIT`.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import msgspec
import trio

from actors.hooks.answer import HookAnswer, read_answer
from actors.hooks.config import Hook
from actors.kernel import ActorError, ActorRef, Rejection
from protocol.environment import ExecCommand, ExecResult, Sandbox

INPUT_LIMIT = 96 * 1024
_CUT_STEPS = (16 * 1024, 4 * 1024, 512)
_ASK_MARGIN_S = 30.0


class HookRun(msgspec.Struct, frozen=True):
    """What one run came to: the answer, and what the audit trail records."""

    hook: Hook
    answer: HookAnswer
    exit_code: int
    duration_ms: int


def hook_input(payload: dict[str, Any]) -> str:
    """The event's JSON, one line, cut to fit a command line."""
    text = msgspec.json.encode(payload).decode()
    for limit in _CUT_STEPS:
        if len(text.encode()) <= INPUT_LIMIT:
            break
        text = msgspec.json.encode(_cut(payload, limit)).decode()
    return text


def _cut(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"\n[cut by Troupe: {len(value) - limit} more characters]"
    if isinstance(value, dict):
        return {key: _cut(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut(item, limit) for item in value]
    return value


def wrapped(command: str, stdin: str) -> str:
    """``command`` as a shell group reading ``stdin`` from a here-document."""
    delimiter = f"TROUPE_HOOK_INPUT_{secrets.token_hex(12)}"
    return f"{{ {command}\n}} <<'{delimiter}'\n{stdin}\n{delimiter}\n"


async def run_hook(
    hook: Hook,
    payload: dict[str, Any],
    environment: ActorRef,
    working_dir: str,
    env_vars: dict[str, str],
    sandbox: Sandbox | None,
    env_allowlist: tuple[str, ...] | None,
) -> HookRun:
    """Run ``hook`` once; a failure to run is a non-blocking error, never raised."""
    started = time.monotonic()
    timeout_ms = int(hook.timeout_s * 1000)
    request = ExecCommand(
        wrapped(hook.command, hook_input(payload)),
        timeout_ms=timeout_ms,
        working_dir=working_dir,
        env_vars=env_vars,
        sandbox=sandbox,
        env_allowlist=env_allowlist,
    )
    try:
        result = await environment.ask(request, timeout=hook.timeout_s + _ASK_MARGIN_S)
    except (ActorError, Rejection, trio.TooSlowError) as exc:
        answer = HookAnswer(error=f"could not run: {exc}")
        return HookRun(hook, answer, -1, _since(started))
    assert isinstance(result, ExecResult)
    answer = read_answer(result.exit_code, result.stdout, result.stderr, result.timed_out)
    return HookRun(hook, answer, result.exit_code, _since(started))


def _since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
