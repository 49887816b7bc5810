"""Finding skills: folders holding a ``SKILL.md`` (YAML front matter with ``name``
and ``description``, then the instructions), with scripts and references beside it.

Where (first found wins for a name; the project's before the user's):

- the project: ``.troupe/skills``, ``.claude/skills``, ``.codex/skills``,
  ``.agents/skills`` in the working directory, read through the session's
  environment (an SSH session reads the project on that host);
- the user: ``$XDG_CONFIG_HOME/troupe/skills`` (``~/.config/troupe/skills``),
  ``~/.claude/skills``, ``$CODEX_HOME/skills`` (``~/.codex/skills``),
  ``~/.agents/skills``, read on this machine.

A skill is text until the model reads it; its scripts run only when the model runs
them, through the shell tool, under the policy and the sandbox. So skills need no
trust, unlike hooks (docs/decisions.md). A folder whose SKILL.md cannot be read is
a warning, never a failed session.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from pathlib import Path

import msgspec
import trio

from actors.kernel import ActorError, ActorRef, Rejection
from actors.skills.front_matter import FrontMatterError, split_front_matter
from environments.errors import FileNotFound
from environments.project_files import read_project_file
from protocol.environment import DirEntry, ListDirectory

PROJECT_SKILL_DIRS = (".troupe/skills", ".claude/skills", ".codex/skills", ".agents/skills")
SKILL_FILE = "SKILL.md"
NAME_LIMIT = 64
DESCRIPTION_LIMIT = 1024
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")


class Skill(msgspec.Struct, frozen=True):
    name: str
    description: str
    directory: str
    scope: str
    """``project`` or ``user``."""
    local: bool
    """Read on this machine (the user's) rather than through the environment."""
    project_root: str = ""
    """A project skill's project: its SKILL.md is read only from inside it."""

    @property
    def path(self) -> str:
        return posixpath.join(self.directory, SKILL_FILE)


class SkillCatalog(msgspec.Struct, frozen=True):
    skills: tuple[Skill, ...] = ()

    def get(self, name: str) -> Skill | None:
        for skill in self.skills:
            if skill.name == name:
                return skill
        return None

    def names(self) -> list[str]:
        return [skill.name for skill in self.skills]


def user_skill_dirs(environ: Mapping[str, str] | None = None) -> list[Path]:
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or Path.home())
    config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    codex = Path(env.get("CODEX_HOME") or home / ".codex")
    return [
        config / "troupe" / "skills",
        home / ".claude" / "skills",
        codex / "skills",
        home / ".agents" / "skills",
    ]


def parse_skill(
    text: str, directory: str, scope: str, local: bool, project_root: str = ""
) -> Skill:
    """The skill a SKILL.md declares; a ValueError says what is wrong with it."""
    meta, _ = split_front_matter(text)
    name = meta.get("name", posixpath.basename(directory.rstrip("/")))
    description = meta.get("description")
    if not isinstance(name, str) or not _NAME.match(name) or len(name) > NAME_LIMIT:
        raise ValueError(f"name {name!r} is not a skill name (letters, digits, - _ . :)")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("no description in the front matter")
    description = " ".join(description.split())[:DESCRIPTION_LIMIT]
    return Skill(name, description, directory, scope, local, project_root)


def _add(found: dict[str, Skill], skill: Skill) -> None:
    found.setdefault(skill.name, skill)


def local_skills(directories: list[Path], scope: str, warnings: list[str]) -> list[Skill]:
    """Skills under each of ``directories`` on this machine."""
    skills: list[Skill] = []
    for base in directories:
        try:
            entries = sorted(base.iterdir())
        except OSError:
            continue
        for entry in entries:
            skill_file = entry / SKILL_FILE
            if not skill_file.is_file():
                continue
            try:
                skills.append(parse_skill(skill_file.read_text(), str(entry), scope, True))
            except (OSError, ValueError, FrontMatterError) as exc:
                warnings.append(f"skill not loaded: {skill_file}: {exc}")
    return skills


def discover_local(
    working_dir: str | Path, environ: Mapping[str, str] | None = None
) -> tuple[SkillCatalog, list[str]]:
    """Every skill for ``working_dir``, all read on this machine (``troupe config``,
    ``/skills``)."""
    warnings: list[str] = []
    found: dict[str, Skill] = {}
    project = [Path(working_dir) / d for d in PROJECT_SKILL_DIRS]
    for skill in local_skills(project, "project", warnings):
        _add(found, skill)
    for skill in local_skills(user_skill_dirs(environ), "user", warnings):
        _add(found, skill)
    return SkillCatalog(tuple(found.values())), warnings


async def discover(
    environment: ActorRef, working_dir: str, environ: Mapping[str, str] | None = None
) -> tuple[SkillCatalog, list[str]]:
    """Every skill a session in ``working_dir`` can use: the project's through
    ``environment``, the user's on this machine."""
    warnings: list[str] = []
    found: dict[str, Skill] = {}
    for relative in PROJECT_SKILL_DIRS:
        base = posixpath.join(working_dir, relative)
        try:
            entries: list[DirEntry] = await environment.ask(ListDirectory(base, 1), timeout=30)
        except (ActorError, Rejection, trio.TooSlowError):
            continue
        for entry in sorted(entries, key=lambda e: e.name):
            if not entry.is_dir:
                continue
            directory = posixpath.join(base, entry.name.rstrip("/"))
            path = posixpath.join(directory, SKILL_FILE)
            try:
                content = await read_project_file(environment, path, working_dir)
                _add(found, parse_skill(content.text, directory, "project", False, working_dir))
            except FileNotFound:
                continue
            except (ActorError, Rejection, trio.TooSlowError, ValueError) as exc:
                warnings.append(f"skill not loaded: {path}: {exc}")
    user = await trio.to_thread.run_sync(local_skills, user_skill_dirs(environ), "user", warnings)
    for skill in user:
        _add(found, skill)
    return SkillCatalog(tuple(found.values())), warnings


async def read_body(skill: Skill, environment: ActorRef) -> str:
    """The instructions of ``skill`` (its SKILL.md without the front matter), read
    now: the model gets them only when it uses the skill."""
    if skill.local:
        text = await trio.to_thread.run_sync(Path(skill.path).read_text)
    else:
        content = await read_project_file(environment, skill.path, skill.project_root)
        text = content.text
    _, body = split_front_matter(text)
    return body.strip()
