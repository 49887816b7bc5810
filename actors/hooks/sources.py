"""Where hooks come from, and which of them run.

The user's files (read on this machine, always trusted): ``~/.claude/settings.json``,
``$CODEX_HOME/hooks.json`` and ``$CODEX_HOME/config.toml`` (``~/.codex`` by
default), and Troupe's ``$XDG_CONFIG_HOME/troupe/hooks.json``.

The project's files (read through the session's environment, so an SSH session
reads the project on that host): ``.claude/settings.json``,
``.claude/settings.local.json``, ``.codex/hooks.json``, ``.codex/config.toml`` and
``.troupe/hooks.json`` in the working directory. They run code, so they take effect
only in a project the user trusted (:mod:`actors.config.trust`); otherwise one
warning names what was ignored. All matching hooks of every file run, as in both
anchors.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from pathlib import Path

import trio

from actors.config.trust import is_trusted, untrusted_line
from actors.hooks.config import HookError, HookSet, parse_hooks_text
from actors.kernel import ActorError, ActorRef, Rejection
from environments.errors import FileNotFound
from environments.project_files import read_project_file

PROJECT_FILES = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".codex/hooks.json",
    ".codex/config.toml",
    ".troupe/hooks.json",
)


def user_files(environ: Mapping[str, str] | None = None) -> list[Path]:
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or Path.home())
    codex = Path(env.get("CODEX_HOME") or home / ".codex")
    config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    return [
        home / ".claude" / "settings.json",
        codex / "hooks.json",
        codex / "config.toml",
        config / "troupe" / "hooks.json",
    ]


def _read_user_files(environ: Mapping[str, str] | None) -> list[tuple[str, str]]:
    found = []
    for path in user_files(environ):
        try:
            found.append((str(path), path.read_text()))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            found.append((str(path), f"\0{exc}"))
    return found


async def load_hooks(
    environment: ActorRef, working_dir: str, environ: Mapping[str, str] | None = None
) -> tuple[HookSet, list[str]]:
    """Every hook that may run in a session in ``working_dir``, and the warnings
    (a file that cannot be used, what an untrusted project declared)."""
    hooks = HookSet()
    warnings: list[str] = []
    for origin, text in await trio.to_thread.run_sync(_read_user_files, environ):
        hooks = hooks.merged(_parsed(origin, text, True, warnings))
    project = HookSet()
    for relative in PROJECT_FILES:
        path = posixpath.join(working_dir, relative)
        try:
            content = await read_project_file(environment, path, working_dir)
        except FileNotFound:
            continue
        except (ActorError, Rejection, trio.TooSlowError) as exc:
            warnings.append(f"hooks not loaded from {path}: {exc}")
            continue
        project = project.merged(_parsed(path, content.text, False, warnings))
    if project.hooks:
        if await trio.to_thread.run_sync(is_trusted, working_dir, environ):
            hooks = hooks.merged(project)
        else:
            sources = sorted({posixpath.relpath(h.source, working_dir) for h in project.hooks})
            shown = [f"hooks ({', '.join(project.events())}) in {', '.join(sources)}"]
            warnings.append(untrusted_line(shown, working_dir))
    return hooks, warnings


def load_hooks_local(
    working_dir: str | Path, environ: Mapping[str, str] | None = None
) -> tuple[HookSet, HookSet, list[str]]:
    """The user's hooks and the project's (whether or not it is trusted), all read
    on this machine, and the warnings: what ``troupe config`` shows."""
    warnings: list[str] = []
    user = HookSet()
    for origin, text in _read_user_files(environ):
        user = user.merged(_parsed(origin, text, True, warnings))
    project = HookSet()
    for relative in PROJECT_FILES:
        path = Path(working_dir) / relative
        try:
            text = path.read_text()
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            text = f"\0{exc}"
        project = project.merged(_parsed(str(path), text, False, warnings))
    return user, project, warnings


def _parsed(origin: str, text: str, user: bool, warnings: list[str]) -> HookSet:
    if text.startswith("\0"):
        warnings.append(f"hooks not loaded from {origin}: {text[1:]}")
        return HookSet()
    try:
        found, skipped = parse_hooks_text(text, origin, user)
    except HookError as exc:
        warnings.append(f"hooks not loaded: {exc}")
        return HookSet()
    warnings.extend(skipped)
    return found
