"""``/skills`` and custom slash commands in the interactive conversation (a real
pty, the scripted provider): the list shows the project's skill, ``/help`` names
the custom command, and typing it sends its expanded prompt to the model."""

from __future__ import annotations

import trio

from tests.cli.conftest import HANG_GUARD, Home, mock_llm, request_bodies, text_of
from tests.cli.terminal import Terminal
from tests.cli.test_interactive import ENTER, Screen, plain_env
from tests.skills.test_skills_in_a_session import plant_skill


async def test_skills_and_a_custom_command_at_the_prompt(home: Home) -> None:
    plant_skill(home.work)
    commands = home.work / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "fix-issue.md").write_text(
        "---\ndescription: Fix an issue by number\nargument-hint: NUMBER\n---\n"
        "Fix issue #$ARGUMENTS and add a test for it.\n"
    )
    async with mock_llm({"turns": [{"text": "Fixed it."}]}) as mock:
        terminal = Terminal(home.argv("--base-url", mock.base_url), home.work, plain_env(home))
        screen = Screen(terminal)
        try:
            with trio.fail_after(HANG_GUARD):
                await screen.expect("/help lists the commands")
                await screen.prompt()
                await terminal.type("/skills" + ENTER)
                await screen.expect("pdf-processing")
                await screen.expect("project")
                await screen.prompt()
                await terminal.type("/help" + ENTER)
                await screen.expect("/fix-issue NUMBER")
                await screen.prompt()
                await terminal.type("/fix-issue 123" + ENTER)
                await screen.expect("Fixed it.")
                await screen.prompt()
                await terminal.type("/exit" + ENTER)
                assert await terminal.finish() == 0
        finally:
            await terminal.aclose()
    sent = text_of(request_bodies(mock)[0])
    assert "Fix issue #123 and add a test for it." in sent
