"""Where skills and custom slash commands plug into a session: found once, at its
first input; the skills' short list joins the system prompt (through the
snapshot), the ``skill`` tool joins the registry when there is a skill, and the
loop expands ``/name`` inputs (docs/skills.md)."""

from __future__ import annotations

import msgspec

from actors.kernel import ActorRef
from actors.session.loop import AgenticLoop
from actors.session.profiles import ProviderProfile
from actors.session.prompt import EnvironmentSnapshot
from actors.skills.catalog import discover
from actors.skills.commands import discover_commands
from actors.skills.index import skills_index
from actors.skills.tool import skill_tool
from protocol.events import WarningEvent


async def wire_skills(
    environment: ActorRef,
    working_dir: str,
    profile: ProviderProfile,
    loop: AgenticLoop,
    snapshot: EnvironmentSnapshot,
) -> EnvironmentSnapshot:
    """Find the skills and commands; the snapshot the session goes on with."""
    catalog, problems = await discover(environment, working_dir)
    commands, more = await discover_commands(environment, working_dir)
    for problem in [*problems, *more]:
        loop.hub.emit(WarningEvent(problem, category="skills"))
    loop.prompt_commands = commands
    if not catalog.skills:
        return snapshot
    profile.registry.register(skill_tool(catalog))
    return msgspec.structs.replace(snapshot, skills=skills_index(catalog))
