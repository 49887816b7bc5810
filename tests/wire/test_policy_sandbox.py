"""The ``sandboxed`` preset end to end: a scripted model runs commands through a
real server; bubblewrap, not the classifier, stops the write to /etc and the
connection to a local listener, while the working directory stays writable."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from environments.sandbox import find_bwrap
from protocol.session import SessionConfig
from protocol.wire import CreateSession, SubmitInput
from tests.wire.conftest import StartStack, events_until, shell_turns, subscribe

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="bwrap missing")


def _outputs(events: list[Any]) -> list[str]:
    return [event.data["output"] for event in events if event.kind == "tool_call_end"]


async def _run(start_stack: StartStack, config: SessionConfig, *commands: str) -> list[str]:
    script = shell_turns(*commands)
    script["repeat"] = False
    async with start_stack(script) as stack, stack.client() as client:
        session = (await client.request(CreateSession, config=config)).session.session_id
        await subscribe(client, session)
        await client.request(SubmitInput, session=session, text="go")
        return _outputs(await events_until(client, "processing_end"))


async def test_sandbox_stops_what_the_policy_let_through(
    start_stack: StartStack, tmp_path: Any
) -> None:
    # admin allowed: the policy lets everything run, so only the sandbox stands between.
    config = SessionConfig(policy="sandboxed", policy_overrides={"admin": "allow"})
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        outputs = await _run(
            start_stack,
            config,
            "touch /etc/troupe-sandbox-wire",
            f"curl -sS --max-time 5 http://127.0.0.1:{port}/",
            "echo kept > made.txt && cat made.txt",
        )
        with pytest.raises(BlockingIOError):
            listener.accept()
    touched, curled, made = outputs
    assert "Read-only file system" in touched and "[exit code: 1," in touched
    assert "[exit code: 7," in curled  # curl: could not connect
    assert made.startswith("kept\n") and "[exit code: 0," in made
    assert (tmp_path / "work" / "made.txt").read_text() == "kept\n"


async def test_without_the_sandbox_the_listener_is_reached(start_stack: StartStack) -> None:
    """The control: the same curl under a policy without sandbox connects."""
    config = SessionConfig(policy="permissive")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        await _run(start_stack, config, f"curl -sS --max-time 1 http://127.0.0.1:{port}/")
        listener.setblocking(False)
        connection, _ = listener.accept()
        connection.close()
