"""``troupe`` with no arguments at a terminal: an interactive conversation, tested
in a real pty against the scripted provider. The screen is read as a person would
see it (escape codes taken out); what reached the model is read from the mock."""

from __future__ import annotations

import re
from typing import Any

import trio

from tests.cli.conftest import HANG_GUARD, Home, mock_llm, request_bodies, text_of
from tests.cli.terminal import Terminal
from tests.cli.test_errors import serve, stop

CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[=>]")
PROMPT_UP = "\x1b[?2004h"
ENTER = "\r"  # the prompt's terminal is raw: Enter is a carriage return
PATCH = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-alpha\n+beta\n*** End Patch\n"


def shell(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]}


def colour_env(home: Home) -> dict[str, str]:
    env = {k: v for k, v in home.env.items() if k != "NO_COLOR"}
    return {**env, "TERM": "xterm-256color"}


def plain_env(home: Home) -> dict[str, str]:
    return {**home.env, "TERM": "xterm-256color"}  # NO_COLOR stays: the plain look


class Screen:
    """A terminal whose screen is read without its escape codes, and which answers
    the cursor position requests the prompt sends, as a real terminal does."""

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.seen = 0
        self.prompts = 0

    async def prompt(self) -> None:
        """Until the next prompt is up (it turns bracketed paste on): what is typed
        then goes to the prompt, not to the terminal's line mode."""
        self.prompts += 1
        with trio.move_on_after(HANG_GUARD / 2) as waiting:
            while self.terminal.screen.count(PROMPT_UP) < self.prompts:
                await self._more()
        if waiting.cancelled_caught:
            raise AssertionError(f"no prompt; the screen:\n{self.terminal.screen!r}")

    @property
    def text(self) -> str:
        return CONTROL.sub("", self.terminal.screen)

    async def expect(self, text: str) -> None:
        with trio.move_on_after(HANG_GUARD / 2) as waiting:
            while text not in self.text[self.seen :]:
                await self._more()
        if waiting.cancelled_caught:
            raise AssertionError(f"{text!r} never showed; the screen:\n{self.terminal.screen!r}")
        self.seen = self.text.index(text, self.seen) + len(text)

    async def _more(self) -> None:
        try:
            chunk = await self.terminal._stream.receive_some()  # pyright: ignore[reportPrivateUsage]
        except trio.BrokenResourceError:  # EIO: the command exited
            chunk = b""
        if not chunk:
            raise AssertionError(f"the command ended; the screen:\n{self.text}")
        for _ in range(chunk.count(b"\x1b[6n")):  # answer as a terminal does: row 1
            await self.terminal.type("\x1b[1;1R")
        self.terminal.screen += chunk.decode(errors="replace").replace("\r\n", "\n")


async def test_a_conversation_with_live_output_a_diff_a_steer_and_a_model_switch(
    home: Home,
) -> None:
    (home.work / "notes.txt").write_text("alpha\n")
    ticking = "for i in 1 2 3; do echo tick-$i; done; while [ ! -f go ]; do sleep 0.05; done"
    script = {
        "turns": [
            shell(ticking),
            {"tool_calls": [{"name": "apply_patch", "arguments": {"patch": PATCH}}]},
            {"text": "First done."},
            {"text": "Second done."},
        ],
        "repeat": False,
    }
    async with mock_llm(script) as mock:
        argv = home.argv("--base-url", mock.base_url)
        terminal = Terminal(argv, home.work, colour_env(home))
        screen = Screen(terminal)
        try:
            with trio.fail_after(HANG_GUARD):
                await screen.expect("session s-")
                await screen.expect("/help lists the commands")
                await screen.prompt()
                await terminal.type("tidy the notes" + ENTER)
                # Live output while the command runs: it is still waiting for `go`.
                await screen.expect("running shell(")
                await screen.expect("tick-3")
                # The spinner's line counts the command's seconds.
                assert re.search(r"running shell\(.*\)\s+\d+\.\ds", screen.text), screen.text
                await terminal.type("use tabs\n")  # typed while it works: a steer
                await screen.expect("[steering queued] use tabs")
                await terminal.type("/clear\n")  # changes the session: not while it works
                await screen.expect("/clear waits for the session")
                await terminal.type("/cost\n")  # a look works while it works
                await screen.expect("cost: ")
                (home.work / "go").write_text("")
                await screen.expect("[steering] use tabs")
                await screen.expect("→ apply_patch(")
                await screen.expect("-alpha")  # the edit's diff
                await screen.expect("+beta")
                await screen.expect("First done.")
                await screen.expect("✓ done")

                await screen.prompt()
                await terminal.type("/model other-model" + ENTER)
                await screen.expect("model: other-model from the next model call")
                await screen.prompt()
                # Enter after a backslash and Alt-Enter start new lines; Enter sends.
                await terminal.type("and now\\" + ENTER + "the second\x1b" + ENTER)
                await terminal.type("line three" + ENTER)
                await screen.expect("Second done.")
                await screen.expect("✓ done")

                await screen.prompt()
                await terminal.type("\x04")  # Ctrl-D on an empty line leaves
                await screen.expect("is kept: troupe --resume s-")
                assert await terminal.finish() == 0
        finally:
            await terminal.aclose()
        bodies = request_bodies(mock)
    assert (home.work / "notes.txt").read_text() == "beta\n"
    assert len(bodies) == 4
    assert "use tabs" in text_of(bodies[1]), "the steer reached the model"
    assert [body["model"] for body in bodies][2:] != ["other-model", "other-model"]
    assert bodies[2]["model"] != "other-model" and bodies[3]["model"] == "other-model"
    assert "tidy the notes" in text_of(bodies[3]), "the second turn is the same session"
    assert "and now\\nthe second\\nline three" in text_of(bodies[3]), "one input, three lines"
    assert "Traceback" not in terminal.screen


async def test_ctrl_c_interrupts_the_turn_and_the_next_input_goes_on(home: Home) -> None:
    script = {
        "turns": [shell("sleep 600"), {"text": "Went on."}, {"text": "Back again."}],
        "repeat": False,
    }
    async with mock_llm(script) as mock:
        argv = home.argv("--base-url", mock.base_url)
        terminal = Terminal(argv, home.work, plain_env(home))
        screen = Screen(terminal)
        try:
            with trio.fail_after(HANG_GUARD):
                await screen.expect("/help lists the commands")
                await screen.prompt()
                await terminal.type("start the long job" + ENTER)
                await screen.expect("→ shell(sleep 600)")
                await terminal.type("\x03")  # Ctrl-C: the line discipline's SIGINT
                await screen.expect("[interrupted]")
                await screen.expect("✗ interrupted")  # the turn's own line, then the prompt
                await screen.prompt()
                await terminal.type("go on" + ENTER)
                await screen.expect("Went on.")
                await screen.prompt()
                await terminal.type("/exit" + ENTER)
                await screen.expect("is kept: troupe --resume s-")
                assert await terminal.finish() == 0
        finally:
            await terminal.aclose()
        session = screen.text.split("session ", 1)[1].split()[0]

        # --continue opens the same session again.
        argv = home.argv("--continue", "--base-url", mock.base_url)
        terminal = Terminal(argv, home.work, plain_env(home))
        screen = Screen(terminal)
        try:
            with trio.fail_after(HANG_GUARD):
                await screen.expect(f"resuming {session}")
                await screen.prompt()
                await terminal.type("once more" + ENTER)
                await screen.expect("Back again.")
                await screen.prompt()
                # Up twice: past this run's input to the last run's /exit (the history
                # file outlives the conversation).
                await terminal.type("\x1b[A\x1b[A" + ENTER)
                await screen.expect("is kept: troupe --resume")
                assert await terminal.finish() == 0
        finally:
            await terminal.aclose()
        bodies = request_bodies(mock)
    assert len(bodies) == 3
    assert "once more" in (home.data / "history").read_text()
    assert "start the long job" in text_of(bodies[1]) and "go on" in text_of(bodies[1])
    assert "go on" in text_of(bodies[2]) and "once more" in text_of(bodies[2])


async def test_slash_commands(home: Home) -> None:
    (home.work / "notes.txt").write_text("alpha\n")
    script = {
        "turns": [
            {"tool_calls": [{"name": "apply_patch", "arguments": {"patch": PATCH}}]},
            {"text": "Patched."},
        ],
        "repeat": False,
    }
    async with mock_llm(script) as mock:
        terminal = Terminal(home.argv("--base-url", mock.base_url), home.work, plain_env(home))
        screen = Screen(terminal)
        try:
            with trio.fail_after(HANG_GUARD):
                await screen.expect("/help lists the commands")
                await screen.prompt()
                await terminal.type("half a thought\x03")  # Ctrl-C at the prompt: a key
                await screen.expect("(Ctrl-D or /exit leaves; the session is kept)")
                await screen.prompt()
                await terminal.type("/help" + ENTER)
                await screen.expect("/diff")
                await screen.prompt()
                await terminal.type("/nonsense" + ENTER)
                await screen.expect("unknown command /nonsense")
                await screen.prompt()
                await terminal.type("/policy" + ENTER)
                await screen.expect("policy: interactive")
                await screen.prompt()
                await terminal.type("patch it" + ENTER)
                await screen.expect("Patched.")
                await screen.prompt()
                await terminal.type("/diff" + ENTER)  # not a git repository: its edits
                await screen.expect("the session's edits in this conversation:")
                await screen.expect("+beta")
                await screen.prompt()
                await terminal.type("/cost" + ENTER)
                await screen.expect("2 model calls")
                first = screen.text.split("session ", 1)[1].split()[0]
                await screen.prompt()
                await terminal.type("/clear" + ENTER)
                await screen.expect("session s-")
                second = screen.text[screen.seen - 2 :].split()[0]
                await screen.prompt()
                await terminal.type("/sessions" + ENTER)
                await screen.expect("newest first")
                await screen.expect(first)
                await screen.prompt()
                await terminal.type(f"/resume {first}" + ENTER)
                await screen.expect(f"resuming {first}")
                await screen.prompt()
                await terminal.type("/model" + ENTER)
                await screen.expect("(/model NAME switches)")
                await screen.prompt()
                await terminal.type("/exit" + ENTER)
                await screen.expect("is kept")
                assert await terminal.finish() == 0
        finally:
            await terminal.aclose()
    assert second.startswith("s-") and second != first
    assert "patch it" in screen.text
    assert "half a thought" not in text_of(request_bodies(mock)), "the line was dropped"


async def test_without_a_terminal_troupe_prints_help(home: Home) -> None:
    done = await home.troupe()
    assert done.returncode == 0
    assert "usage: troupe" in done.stdout.decode()
    assert "interactive conversation" in done.stdout.decode()


async def test_diff_in_a_git_work_tree(home: Home) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    (home.work / "notes.txt").write_text("alpha\n")
    for command in (["init", "-q"], ["add", "notes.txt"], ["commit", "-qm", "first"]):
        await trio.run_process([*git, *command], cwd=home.work)
    (home.work / "new.txt").write_text("fresh\n")
    # A planted repository program (fsmonitor, an external diff) must not run for /diff.
    canary = home.work.parent / "planted-ran"
    plant = home.work.parent / "plant.sh"
    plant.write_text(f"#!/bin/sh\ntouch {canary}\n")
    plant.chmod(0o755)
    for key in ("core.fsmonitor", "diff.external"):
        await trio.run_process(["git", "config", key, str(plant)], cwd=home.work)
    script = {
        "turns": [
            {"tool_calls": [{"name": "apply_patch", "arguments": {"patch": PATCH}}]},
            {"text": "Patched."},
        ],
        "repeat": False,
    }
    async with mock_llm(script) as mock:
        terminal = Terminal(home.argv("--base-url", mock.base_url), home.work, plain_env(home))
        screen = Screen(terminal)
        try:
            with trio.fail_after(HANG_GUARD):
                await screen.prompt()
                await terminal.type("patch it" + ENTER)
                await screen.expect("Patched.")
                await screen.prompt()
                await terminal.type("/diff" + ENTER)
                await screen.expect(f"git diff in {home.work}:")
                await screen.expect("diff --git a/notes.txt b/notes.txt")
                await screen.expect("-alpha")
                await screen.expect("+beta")
                await screen.expect("+++ new.txt (new, untracked)")
                await screen.prompt()
                await terminal.type("/exit" + ENTER)
                assert await terminal.finish() == 0
                assert not canary.exists(), "a repository program ran for /diff"
        finally:
            await terminal.aclose()


async def test_on_a_running_server(home: Home) -> None:
    """With ``troupe serve`` running, the conversation's session is the server's:
    listed there, and it stays when the conversation ends."""
    async with mock_llm({"turns": [{"text": "Served."}], "repeat": False}) as mock:
        server, url = await serve(home, "--base-url", mock.base_url)
        terminal = Terminal(home.argv(), home.work, plain_env(home))
        screen = Screen(terminal)
        try:
            with trio.fail_after(HANG_GUARD):
                await screen.expect(f"(server {url})")
                await screen.prompt()
                await terminal.type("hello server" + ENTER)
                await screen.expect("Served.")
                await screen.prompt()
                await terminal.type("\x04")
                assert await terminal.finish() == 0
            session = screen.text.split("session ", 1)[1].split()[0]
            listed = await home.troupe("sessions", "--json")
        finally:
            await terminal.aclose()
            stop(server)
    assert session in listed.stdout.decode()


async def test_the_conversation_asks_to_trust_and_says_the_sandbox_is_off(home: Home) -> None:
    """As ``troupe run`` does: the project's ignored settings bring the trust
    question before anything starts (a yes makes them count at once), and with the
    sandbox off (``--policy permissive``) the header says so; trusted and sandboxed,
    neither shows."""
    async with (
        mock_llm({"turns": [{"text": "mine"}], "repeat": True}) as mine,
        mock_llm({"turns": [{"text": "theirs"}], "repeat": True}) as theirs,
    ):
        home.config.write_text(f'base_url = "{mine.base_url}"\n')
        (home.work / ".troupe").mkdir()
        (home.work / ".troupe" / "config.toml").write_text(f'base_url = "{theirs.base_url}"\n')
        for flags, asked in ((["--policy", "permissive"], True), ([], False)):
            terminal = Terminal(home.argv(*flags), home.work, plain_env(home))
            screen = Screen(terminal)
            try:
                with trio.fail_after(HANG_GUARD):
                    if asked:
                        await screen.expect(f"Trust {home.work} (its .troupe/ may run programs)?")
                        await terminal.type("yes\n")  # before the prompt: line mode
                    await screen.expect("/help lists the commands")
                    await screen.prompt()
                    await terminal.type("hello" + ENTER)
                    await screen.expect("theirs")
                    await screen.prompt()
                    await terminal.type("\x04")
                    assert await terminal.finish() == 0
            finally:
                await terminal.aclose()
            header = screen.text.split("session ", 1)[1].splitlines()[0]
            assert ("; sandbox off: commands are only classified" in header) == asked, header
            assert ("Trust " in screen.text) == asked, screen.text
    assert request_bodies(mine) == [] and len(request_bodies(theirs)) == 2
