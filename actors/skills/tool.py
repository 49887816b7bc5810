"""The one tool that loads a skill: ``skill(name)`` returns the instructions of
SKILL.md (read at that moment), the skill's directory and the files beside it, so
the model can read its references and run its scripts with the ordinary tools
(under the policy and the sandbox, like any other command). An unknown name lists
the skills there are."""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Annotated

import msgspec
import trio

from actors.kernel import ActorError
from actors.skills.catalog import SKILL_FILE, Skill, SkillCatalog, read_body
from actors.tools.core.context import ToolContext
from actors.tools.registry import Tool, ToolFailure
from protocol.environment import ListDirectory

SKILL_TOOL = "skill"
SKILL_HOOK_NAMES = ("Skill",)
"""What hooks written for Claude Code call it (docs/hooks.md)."""
FILES_SHOWN = 50


class SkillParams(msgspec.Struct, frozen=True):
    name: Annotated[str, msgspec.Meta(description="The skill's name, from the list of skills")]


def skill_tool(catalog: SkillCatalog) -> Tool:
    """The ``skill`` tool over ``catalog``."""

    async def load(arguments: SkillParams, context: ToolContext) -> str:
        skill = catalog.get(arguments.name)
        if skill is None:
            known = ", ".join(catalog.names()) or "none"
            raise ToolFailure(f"No skill named {arguments.name!r}. Skills: {known}")
        try:
            body = await read_body(skill, context.environment)
        except (OSError, ActorError) as exc:
            raise ToolFailure(f"Cannot read {skill.path}: {exc}") from None
        if skill.local:
            files = await trio.to_thread.run_sync(_local, skill)
        else:
            files = await _files(skill.directory, context)
        listing = "\n".join(f"  {name}" for name in files[:FILES_SHOWN])
        return (
            f'<skill name="{skill.name}">\n'
            f"Skill directory: {skill.directory} (paths below are relative to it)\n"
            + (f"Files beside {SKILL_FILE}:\n{listing}\n" if listing else "")
            + f"\n{body}\n</skill>"
        )

    return Tool(
        SKILL_TOOL,
        "Load a skill's instructions by name (see the list of skills); returns them with "
        "the skill's directory, whose scripts you run with the shell tool.",
        load,
        SkillParams,
        category="read",
        hook_names=SKILL_HOOK_NAMES,
    )


async def _files(directory: str, context: ToolContext) -> list[str]:
    try:
        entries = await context.environment.ask(ListDirectory(directory, 2), timeout=30)
    except ActorError:
        return []
    return [e.name + ("/" if e.is_dir else "") for e in entries if e.name != SKILL_FILE]


def _local(skill: Skill) -> list[str]:
    """The files beside a skill of this machine, two levels down."""
    directory = Path(skill.directory)
    found = []
    for path in sorted(directory.rglob("*")):
        relative = posixpath.relpath(str(path), str(directory))
        if relative == SKILL_FILE or relative.count("/") > 1:
            continue
        found.append(relative + ("/" if path.is_dir() else ""))
    return found
