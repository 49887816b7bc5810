"""Hooks in the anchors' format (Claude Code's settings files, Codex's hooks.json):
user programs run at fixed points of a session, JSON on stdin, exit code 2 blocks.

:mod:`.config` reads the files' shape, :mod:`.sources` finds and loads them
(project files only in a trusted project), :mod:`.names` maps Troupe's tool names
to the anchors', :mod:`.answer` reads what a hook said, :mod:`.runner` runs one
hook in the session's environment and sandbox, and :mod:`.session` fires an event's
hooks for a session.
"""

from actors.hooks.answer import HookAnswer
from actors.hooks.config import EVENTS, HookEvent, HookSet
from actors.hooks.session import SessionHooks

__all__ = ["EVENTS", "HookAnswer", "HookEvent", "HookSet", "SessionHooks"]
