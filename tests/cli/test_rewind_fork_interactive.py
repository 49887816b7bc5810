"""``/rewind`` and ``/fork`` in an interactive conversation, in a real pty against
the scripted provider: the list of inputs to pick from, the rewound input back in
the prompt to edit, and a fork that goes on in a new session. What reached the
model is read from the mock."""

from __future__ import annotations

import trio

from tests.cli.conftest import HANG_GUARD, Home, mock_llm, request_bodies, text_of
from tests.cli.terminal import Terminal
from tests.cli.test_interactive import ENTER, Screen, plain_env


async def test_slash_rewind_picks_an_input_and_slash_fork_goes_on_elsewhere(home: Home) -> None:
    async with mock_llm({"turns": [{"text": "An answer."}]}) as mock:
        terminal = Terminal(home.argv("--base-url", mock.base_url), home.work, plain_env(home))
        screen = Screen(terminal)
        try:
            with trio.fail_after(HANG_GUARD * 2):
                await screen.expect("/help lists the commands")
                for text in ("first question", "second question", "third question"):
                    await screen.prompt()
                    await terminal.type(text + ENTER)
                    await screen.expect("done")
                await screen.prompt()
                await terminal.type("/rewind" + ENTER)
                await screen.expect("inputs of this session:")
                await screen.expect("2  second question")
                await screen.expect("/rewind N goes back")
                await screen.prompt()
                await terminal.type("/rewind 2" + ENTER)
                await screen.expect("the input is back in the prompt")
                await screen.expect("[rewind] to before input")
                await screen.prompt()
                await terminal.type(" again" + ENTER)  # the prompt holds "second question"
                await screen.expect("done")
                after_rewind = text_of(request_bodies(mock)[-1])
                await screen.prompt()
                await terminal.type("/fork" + ENTER)
                await screen.expect("into s-")
                await screen.expect("/resume")
                await screen.prompt()
                await terminal.type("in the fork" + ENTER)
                await screen.expect("done")
                in_fork = text_of(request_bodies(mock)[-1])
                await screen.prompt()
                await terminal.type("/exit" + ENTER)
                assert await terminal.finish() == 0
        finally:
            await terminal.aclose()
    assert "first question" in after_rewind and "second question again" in after_rewind
    assert after_rewind.count("second question") == 1 and "third question" not in after_rewind
    assert "second question again" in in_fork and "in the fork" in in_fork
    assert "third question" not in in_fork
