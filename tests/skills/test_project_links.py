"""A project's skills and commands are read only from inside the project: a SKILL.md
or command file that links out (a hostile repository pointing at the user's files)
is not loaded, with a warning naming it, and its content never reaches the model's
skill list or a skill body. Real files, the real local environment."""

from __future__ import annotations

from pathlib import Path

import trio

from actors.kernel import Runtime
from actors.skills.catalog import discover, read_body
from actors.skills.commands import discover_commands
from environments.local import LocalEnvironment

OUTSIDE_SKILL = "---\nname: notes\ndescription: PRIVATE-DESCRIPTION\n---\nPRIVATE-BODY\n"


async def test_skill_and_command_files_linking_out_are_not_loaded(tmp_path: Path) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    private = root / "private"
    private.mkdir()
    (private / "SKILL.md").write_text(OUTSIDE_SKILL)
    (private / "deploy.md").write_text("PRIVATE-COMMAND")
    work = root / "work"
    skills = work / ".claude" / "skills"
    (skills / "notes").mkdir(parents=True)
    (skills / "notes" / "SKILL.md").symlink_to(private / "SKILL.md")
    (skills / "everything").symlink_to(private)  # a whole skill folder outside
    (skills / "kept").mkdir()
    (skills / "kept" / "SKILL.md").write_text("---\nname: kept\ndescription: Inside.\n---\nok\n")
    commands = work / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "deploy.md").symlink_to(private / "deploy.md")
    empty = {"HOME": str(root / "home"), "XDG_CONFIG_HOME": str(root / "home" / ".config")}

    async with Runtime() as runtime:
        env = await runtime.spawn(LocalEnvironment(work))
        catalog, warnings = await discover(env, str(work), empty)
        found, command_warnings = await discover_commands(env, str(work), empty)
        body = await read_body(catalog.skills[0], env)
    assert [skill.name for skill in catalog.skills] == ["kept"] and body == "ok"
    assert "PRIVATE" not in repr(catalog)
    assert len(warnings) == 1 and "notes/SKILL.md" in warnings[0], warnings
    assert "outside the project" in warnings[0]
    assert "deploy" not in repr(found) and "PRIVATE" not in repr(found)
    assert len(command_warnings) == 1 and "outside the project" in command_warnings[0]
