"""What a hook said, read by the anchors' output contract.

- Exit code 0: success. Stdout that is a JSON object may decide (below); other
  stdout is context for the model on ``UserPromptSubmit`` and ``SessionStart``.
- Exit code 2: block. Stderr is the reason (the model reads it where the event
  has a model to tell: a blocked tool call, a Stop that must go on).
- Any other exit code, a timeout, or a hook that cannot start: a non-blocking
  error, shown to the user as one warning; the session goes on.

JSON answers: ``continue: false`` (with ``stopReason``) ends the input;
``decision: "block"`` with ``reason``; ``decision: "approve"`` (the older form of
allow); ``hookSpecificOutput`` with ``permissionDecision`` (``allow``, ``deny``,
``ask``) and ``permissionDecisionReason``, ``updatedInput``, ``additionalContext``,
and for PermissionRequest ``decision: {behavior: allow|deny, message}``;
``systemMessage`` is shown to the user. A hook's output is untrusted input: a
field of the wrong type is ignored, never a crash, and nothing a hook says can
widen the policy (see :mod:`actors.hooks.session`).
"""

from __future__ import annotations

import json
from typing import Any, Literal

import msgspec

Decision = Literal["allow", "deny", "ask", "block"]
_RANK = {"allow": 1, "ask": 2, "deny": 3, "block": 3}
BLOCKING_EXIT = 2
REASON_LIMIT = 4000


class HookAnswer(msgspec.Struct, frozen=True):
    """One hook's answer, or the combined answer of an event's hooks."""

    decision: Decision | None = None
    reason: str = ""
    context: str = ""
    updated_input: dict[str, Any] | None = None
    stop: bool = False
    stop_reason: str = ""
    system_message: str = ""
    error: str = ""
    """A non-blocking failure (exit code other than 0 and 2, timeout)."""

    @property
    def blocks(self) -> bool:
        return self.decision in ("deny", "block")

    @property
    def outcome(self) -> str:
        """One word for the audit trail."""
        if self.error:
            return "error"
        if self.decision is not None:
            return self.decision
        if self.stop:
            return "stop"
        return "context" if self.context else "ok"


def read_answer(exit_code: int, stdout: str, stderr: str, timed_out: bool) -> HookAnswer:
    """One run's answer by the contract above."""
    if timed_out:
        return HookAnswer(error="timed out")
    if exit_code == BLOCKING_EXIT:
        return HookAnswer(decision="block", reason=_clip(stderr.strip() or "blocked by a hook"))
    if exit_code != 0:
        detail = stderr.strip().splitlines()[-1:] or [f"exit code {exit_code}"]
        return HookAnswer(error=_clip(f"exit code {exit_code}: {detail[0]}"))
    text = stdout.strip()
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            return _from_json(parsed)
    return HookAnswer(context=_clip(text))


def _from_json(data: dict[str, Any]) -> HookAnswer:
    specific = _dict(data.get("hookSpecificOutput"))
    decision: Decision | None = None
    reason = _text(data.get("reason"))
    match data.get("decision"):
        case "block":
            decision = "block"
        case "approve":
            decision = "allow"
        case _:
            pass
    permission = specific.get("permissionDecision")
    if permission in ("allow", "deny", "ask"):
        decision = permission
        reason = _text(specific.get("permissionDecisionReason")) or reason
    behaviour = _dict(specific.get("decision"))  # PermissionRequest
    if behaviour.get("behavior") in ("allow", "deny"):
        decision = behaviour["behavior"]
        reason = _text(behaviour.get("message")) or reason
    updated = specific.get("updatedInput")
    if not isinstance(updated, dict):
        updated = behaviour.get("updatedInput")
    return HookAnswer(
        decision=decision,
        reason=_clip(reason),
        context=_clip(_text(specific.get("additionalContext"))),
        updated_input=updated if isinstance(updated, dict) else None,
        stop=data.get("continue") is False,
        stop_reason=_clip(_text(data.get("stopReason"))),
        system_message=_clip(_text(data.get("systemMessage"))),
    )


def combine(answers: list[HookAnswer]) -> HookAnswer:
    """The answers of hooks that ran together: the strictest decision wins (deny
    over ask over allow), contexts and messages are joined, the updated input of
    the deciding hook is kept."""
    decision: Decision | None = None
    reason = ""
    updated: dict[str, Any] | None = None
    for answer in answers:
        if answer.decision is None:
            continue
        if decision is None or _RANK[answer.decision] > _RANK[decision]:
            decision, reason, updated = answer.decision, answer.reason, answer.updated_input
        elif answer.decision == decision and answer.updated_input is not None:
            updated = answer.updated_input
    stops = [a for a in answers if a.stop]
    return HookAnswer(
        decision=decision,
        reason=reason,
        context="\n".join(a.context for a in answers if a.context),
        updated_input=updated,
        stop=bool(stops),
        stop_reason="; ".join(a.stop_reason for a in stops if a.stop_reason),
        system_message="\n".join(a.system_message for a in answers if a.system_message),
        error="; ".join(a.error for a in answers if a.error),
    )


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _clip(text: str) -> str:
    return text if len(text) <= REASON_LIMIT else text[:REASON_LIMIT] + " [truncated]"
