"""The shape of a hooks file, shared by Claude Code's ``settings.json``, Codex's
``hooks.json`` (and the ``[hooks]`` tables of its ``config.toml``) and Troupe's own
``hooks.json``::

    {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "...", "timeout": 30}]}]}}

An event holds matcher groups; a group holds handlers. Only ``command`` handlers
run here (Claude Code's ``prompt`` and ``agent`` handlers ask a model instead, and
are skipped with a warning). Other keys of a settings file are not ours and are
left alone; an unknown event is named in a warning, never an error.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, get_args

import msgspec

HookEvent = Literal[
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PermissionRequest",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "Notification",
]
EVENTS: tuple[str, ...] = get_args(HookEvent)
DEFAULT_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 600.0


class HookError(ValueError):
    """A hooks file that cannot be used; the message names the file."""


class HookHandler(msgspec.Struct, frozen=True):
    """One program to run. ``timeout`` is in seconds, as in both anchors."""

    command: str = ""
    type: str = "command"
    timeout: float | None = None


class HookGroup(msgspec.Struct, frozen=True):
    """Handlers that run when ``matcher`` matches (empty or ``*``: always)."""

    hooks: list[HookHandler] = msgspec.field(default_factory=list)
    matcher: str = ""


class Hook(msgspec.Struct, frozen=True):
    """One handler, ready to run: where it came from and what it matches."""

    event: str
    command: str
    matcher: str
    timeout_s: float
    source: str
    """The file that declared it (shown in warnings and in ``troupe audit``)."""
    user: bool
    """From the user's own files (always trusted) rather than the project's."""


class HookSet(msgspec.Struct, frozen=True):
    hooks: tuple[Hook, ...] = ()

    def for_event(self, event: str) -> list[Hook]:
        return [hook for hook in self.hooks if hook.event == event]

    def merged(self, other: HookSet) -> HookSet:
        return HookSet((*self.hooks, *other.hooks))

    def events(self) -> list[str]:
        return sorted({hook.event for hook in self.hooks})


def parse_hooks_text(text: str, origin: str, user: bool) -> tuple[HookSet, list[str]]:
    """The hooks a file declares (JSON, or TOML when ``origin`` ends in ``.toml``),
    and a warning for each part that is skipped. A file that is not readable at
    all raises :class:`HookError`."""
    import tomllib  # here: its parser compiles its patterns on import, and most runs have no file

    try:
        raw: Any = tomllib.loads(text) if origin.endswith(".toml") else json.loads(text or "{}")
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise HookError(f"{origin}: {exc}") from None
    if not isinstance(raw, dict):
        raise HookError(f"{origin}: expected an object at the top")
    table = raw.get("hooks")
    if table is None or _switched_off(raw):
        return HookSet(), []
    if isinstance(table, dict):  # Codex keeps per-hook state in [hooks.state]: not an event
        table = {name: groups for name, groups in table.items() if name != "state"}
    try:
        events = msgspec.convert(table, dict[str, list[HookGroup]])
    except msgspec.ValidationError as exc:
        raise HookError(f"{origin}: hooks: {exc}") from None
    hooks: list[Hook] = []
    warnings: list[str] = []
    unknown = sorted(name for name in events if name not in EVENTS)
    if unknown:
        warnings.append(f"{origin}: hook events not supported here: {', '.join(unknown)}")
    for event, groups in events.items():
        if event not in EVENTS:
            continue
        for group in groups:
            if not _valid_matcher(group.matcher):
                warnings.append(f"{origin}: {event}: matcher {group.matcher!r} is not a regex")
                continue
            for handler in group.hooks:
                if handler.type != "command" or not handler.command.strip():
                    warnings.append(
                        f"{origin}: {event}: a {handler.type!r} hook without a command is skipped"
                    )
                    continue
                timeout = handler.timeout if handler.timeout and handler.timeout > 0 else None
                hooks.append(
                    Hook(
                        event=event,
                        command=handler.command,
                        matcher=group.matcher,
                        timeout_s=min(timeout or DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S),
                        source=origin,
                        user=user,
                    )
                )
    return HookSet(tuple(hooks)), warnings


def _switched_off(raw: dict[str, Any]) -> bool:
    """Codex's ``[features] hooks = false`` (``codex_hooks``, its older name) turns
    the file's hooks off, as it does in Codex."""
    features = raw.get("features")
    if not isinstance(features, dict):
        return False
    return features.get("hooks") is False or features.get("codex_hooks") is False


def _valid_matcher(matcher: str) -> bool:
    try:
        re.compile(matcher)
    except re.error:
        return False
    return True
