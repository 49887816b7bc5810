"""Custom slash commands: Markdown prompt files, as the anchors keep them.

``/name some words`` becomes the file's text, with ``$ARGUMENTS`` replaced by
"some words" and ``$1`` ... ``$9`` by its words one by one (shell-style quoting
groups words); a file with no placeholder gets the words appended after an
``ARGUMENTS:`` line. Front matter (``description``, ``argument-hint``) is shown in
listings, never sent. The anchors' shell (``!`cmd` ``) and file (``@path``)
inclusions are not run: the text goes to the model as written.

Where (first found wins; the project's before the user's): ``.troupe/commands``,
``.claude/commands`` and ``.codex/prompts`` in the working directory, then
``$XDG_CONFIG_HOME/troupe/commands``, ``~/.claude/commands`` and
``$CODEX_HOME/prompts`` (``~/.codex/prompts``). The file name without ``.md`` is
the command's name. A command is text for the model, so it needs no trust.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from collections.abc import Mapping
from pathlib import Path

import msgspec
import trio

from actors.kernel import ActorError, ActorRef, Rejection
from actors.skills.front_matter import FrontMatterError, split_front_matter
from environments.project_files import read_project_file
from protocol.environment import DirEntry, ListDirectory

PROJECT_COMMAND_DIRS = (".troupe/commands", ".claude/commands", ".codex/prompts")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_POSITIONAL = re.compile(r"\$([1-9])")


class PromptCommand(msgspec.Struct, frozen=True):
    name: str
    description: str
    argument_hint: str
    path: str
    scope: str
    body: str

    def expand(self, arguments: str) -> str:
        """The prompt for ``/name arguments``."""
        try:
            words = shlex.split(arguments)
        except ValueError:
            words = arguments.split()
        body = self.body.strip()
        uses = "$ARGUMENTS" in body or _POSITIONAL.search(body) is not None
        body = body.replace("$ARGUMENTS", arguments)
        body = _POSITIONAL.sub(lambda m: _word(words, int(m.group(1))), body)
        if not uses and arguments:
            body = f"{body}\n\nARGUMENTS: {arguments}"
        return body


def _word(words: list[str], number: int) -> str:
    return words[number - 1] if number <= len(words) else ""


class CommandCatalog(msgspec.Struct, frozen=True):
    commands: tuple[PromptCommand, ...] = ()

    def get(self, name: str) -> PromptCommand | None:
        for command in self.commands:
            if command.name == name:
                return command
        return None

    def expand(self, text: str) -> str | None:
        """The prompt when ``text`` is ``/name ...`` for a known command, else None."""
        if not text.startswith("/"):
            return None
        head, _, rest = text.strip().partition(" ")
        command = self.get(head[1:])
        if command is None:
            return None
        return command.expand(rest.strip())


def parse_command(text: str, path: str, scope: str) -> PromptCommand:
    name = posixpath.basename(path).removesuffix(".md")
    if not _NAME.match(name):
        raise ValueError(f"{name!r} is not a command name")
    meta, body = split_front_matter(text)
    description = meta.get("description")
    hint = meta.get("argument-hint")
    if not isinstance(description, str) or not description.strip():
        first = next((line.strip("# ").strip() for line in body.splitlines() if line.strip()), "")
        description = first[:100]
    return PromptCommand(
        name=name,
        description=" ".join(description.split()),
        argument_hint=hint if isinstance(hint, str) else "",
        path=path,
        scope=scope,
        body=body,
    )


def user_command_dirs(environ: Mapping[str, str] | None = None) -> list[Path]:
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or Path.home())
    config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    codex = Path(env.get("CODEX_HOME") or home / ".codex")
    return [config / "troupe" / "commands", home / ".claude" / "commands", codex / "prompts"]


def _local(directories: list[Path], scope: str, warnings: list[str]) -> list[PromptCommand]:
    found: list[PromptCommand] = []
    for base in directories:
        try:
            files = sorted(p for p in base.iterdir() if p.suffix == ".md" and p.is_file())
        except OSError:
            continue
        for path in files:
            try:
                found.append(parse_command(path.read_text(), str(path), scope))
            except (OSError, ValueError, FrontMatterError) as exc:
                warnings.append(f"command not loaded: {path}: {exc}")
    return found


def _catalog(*groups: list[PromptCommand]) -> CommandCatalog:
    seen: dict[str, PromptCommand] = {}
    for group in groups:
        for command in group:
            seen.setdefault(command.name, command)
    return CommandCatalog(tuple(seen.values()))


def discover_commands_local(
    working_dir: str | Path, environ: Mapping[str, str] | None = None
) -> tuple[CommandCatalog, list[str]]:
    """Every command for ``working_dir``, read on this machine (interactive mode)."""
    warnings: list[str] = []
    project = _local([Path(working_dir) / d for d in PROJECT_COMMAND_DIRS], "project", warnings)
    user = _local(user_command_dirs(environ), "user", warnings)
    return _catalog(project, user), warnings


async def discover_commands(
    environment: ActorRef, working_dir: str, environ: Mapping[str, str] | None = None
) -> tuple[CommandCatalog, list[str]]:
    """Every command a session in ``working_dir`` knows: the project's through
    ``environment``, the user's on this machine."""
    warnings: list[str] = []
    project: list[PromptCommand] = []
    for relative in PROJECT_COMMAND_DIRS:
        base = posixpath.join(working_dir, relative)
        try:
            entries: list[DirEntry] = await environment.ask(ListDirectory(base, 1), timeout=30)
        except (ActorError, Rejection, trio.TooSlowError):
            continue
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_dir or not entry.name.endswith(".md"):
                continue
            path = posixpath.join(base, entry.name)
            try:
                content = await read_project_file(environment, path, working_dir)
                project.append(parse_command(content.text, path, "project"))
            except (ActorError, Rejection, trio.TooSlowError, ValueError) as exc:
                warnings.append(f"command not loaded: {path}: {exc}")
    user = await trio.to_thread.run_sync(_local, user_command_dirs(environ), "user", warnings)
    return _catalog(project, user), warnings
