"""Background subagents, end to end: ``troupe serve`` as a real process, the scripted
provider over loopback HTTP and a real WebSocket client. Five background
subagents start; the parent's first input ends with them working and takes two
more inputs while they run; a steer reaches one and a cancel kills another's
command; three results come back as follow-up inputs (one queued behind an input
at work, two starting an input of an idle parent); and the server's shutdown
leaves no process behind, though one subagent's command was still running."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import msgspec
import trio

from actors.mockllm import Script, serve_mock_llm
from actors.mockllm.wires import first_user_text
from protocol.client import connect
from protocol.wire import CreateSession, Event, SubmitInput
from tests.environments.helpers import running_in
from tests.session.scripts import body_text, call
from tests.waiting import wait_until, wait_until_nothing_runs_in
from tests.wire.conftest import BOTH_STORES, HANG_GUARD, events_until, subscribe, troupe_serve

LONG = 600_000


def waits_for(name: str, then: str) -> dict[str, Any]:
    command = f"while [ ! -e {name} ]; do sleep 0.05; done; echo {then}"
    return {"tool_calls": [call("shell", command=command, timeout_ms=LONG)]}


def sleeps_in(directory: str) -> dict[str, Any]:
    command = f"cd {directory} && trap '' TERM && sleep 600"
    return {"tool_calls": [call("shell", command=command, timeout_ms=LONG)]}


PARENT = [
    # one spawn per step, so BG-n is a-n (calls of one step run side by side)
    *({"tool_calls": [call("spawn_agent", task=f"BG-{n}: background job", background=True)]}
      for n in range(1, 6)),
    {"text": "Started five."},
    # the second input
    {"tool_calls": [call("steer_agent", agent_id="a-2", message="STEER-WORD"),
                    call("cancel_agent", agent_id="a-4")]},
    {"text": "Steered a-2, cancelled a-4."},
    # the third input, during which a-3 finishes
    waits_for("hold.go", "held"),
    {"text": "Third input done."},
    # the follow-ups, in the order the test releases them
    {"text": "Noted a-3."},
    {"text": "Noted a-1."},
    {"text": "Noted a-2."},
]  # fmt: skip
CHILDREN = {
    "BG-1": [waits_for("go1", "one"), {"text": "one finished"}],
    "BG-2": [waits_for("go2", "two"), {"text": "two finished after the steer"}],
    "BG-3": [waits_for("go3", "three"), {"text": "three finished"}],
    "BG-4": [sleeps_in("bg4")],
    "BG-5": [sleeps_in("bg5")],
}
SCRIPT = {
    "conversations": [
        {"match": "PARENT", "turns": PARENT},
        *({"match": task, "turns": turns} for task, turns in CHILDREN.items()),
    ]
}


class Follow:
    """The parent's events, as one client sees them."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.seen: list[Event] = []

    async def until(self, kind: str, **data: Any) -> Event:
        """The next event of ``kind`` whose data holds ``data``."""
        with trio.fail_after(HANG_GUARD):
            while True:
                event = (await events_until(self.client, kind, into=self.seen))[-1]
                if all(event.data.get(key) == value for key, value in data.items()):
                    return event

    def inputs(self) -> list[str]:
        return [e.data["content"] for e in self.seen if e.kind == "user_input"]


@BOTH_STORES
async def test_three_background_results_come_back_while_the_parent_goes_on(
    tmp_path: Path, store: str
) -> None:
    work = workspace(tmp_path)
    data_dir = tmp_path / "data"
    script = msgspec.convert(SCRIPT, Script)
    async with (
        serve_mock_llm(script) as mock,
        troupe_serve(data_dir, work, mock.base_url, store) as serve,
    ):
        token = (data_dir / "token").read_text().strip()
        async with connect(serve.url, token) as client:
            session = (await client.request(CreateSession)).session.session_id
            await subscribe(client, session)
            parent = Follow(client)

            await client.request(SubmitInput, session=session, text="PARENT: five jobs")
            ended = await parent.until("processing_end")
            assert ended.data["background_agents"] == [f"a-{n}" for n in range(1, 6)]
            spawned = [e for e in parent.seen if e.kind == "subagent_spawned"]
            assert [e.data["background"] for e in spawned] == [True] * 5

            # A second input while all five work: a steer and a cancel.
            await wait_until_commands_run(work, "bg4", "bg5")
            await client.request(SubmitInput, session=session, text="second input")
            await parent.until("subagent_closed", agent_id="a-4")
            # The cancel ends a-4's command: its kill ladder may still be running when
            # subagent_closed arrives (seen under pytest-xdist), so wait for the end.
            await wait_until_nothing_runs_in(work / "bg4")
            assert running_in(work / "bg4") == [], "the cancel killed a-4's command"
            ended = await parent.until("processing_end")
            assert ended.data["background_agents"] == ["a-1", "a-2", "a-3", "a-5"]

            # A third input; a-3 finishes while it works: its result waits for it.
            await client.request(SubmitInput, session=session, text="third input")
            await parent.until("tool_call_start")
            (work / "go3").touch()
            await parent.until("subagent_completed", agent_id="a-3")
            (work / "hold.go").touch()
            ended = await parent.until("processing_end")
            assert ended.data["background_agents"] == ["a-1", "a-2", "a-5"]

            # The parent is idle: each result starts an input of its own.
            (work / "go1").touch()
            await parent.until("user_input")
            ended = await parent.until("processing_end")
            assert ended.data["background_agents"] == ["a-2", "a-5"]
            (work / "go2").touch()
            await parent.until("user_input")
            ended = await parent.until("processing_end")
            assert ended.data["background_agents"] == ["a-5"]

            inputs = parent.inputs()
            assert inputs[:3] == ["PARENT: five jobs", "second input", "third input"]
            follow_ups = inputs[3:]
            assert [text.split("\n")[0] for text in follow_ups] == [
                f"[Background subagent a-{n} completed after 2 turns; "
                f"its task: BG-{n}: background job]"
                for n in (3, 1, 2)
            ]
            assert follow_ups[0].endswith("three finished")
            assert follow_ups[2].endswith("two finished after the steer")
            said = [e.data["text"] for e in parent.seen if e.kind == "assistant_text_end"]
            assert said[-3:] == ["Noted a-3.", "Noted a-1.", "Noted a-2."]
            assert not any("a-4" in text for text in follow_ups), "cancelled: no result"

            steered = [body for body in mock_bodies(mock) if "BG-2" in first_user_text_any(body)]
            assert "STEER-WORD" in body_text(steered[-1])

        # Shutdown with a-5's command still running: the ladder ends it.
        assert running_in(work / "bg5"), "a-5 still works at shutdown"
        serve.process.send_signal(signal.SIGTERM)
        with trio.fail_after(HANG_GUARD):
            await serve.process.wait()
        assert running_in(work) == [], "nothing is left running"


def workspace(tmp_path: Path) -> Path:
    """The sessions' directory, with the two the long commands sleep in."""
    work = Path(os.path.realpath(tmp_path)) / "work"
    for directory in ("bg4", "bg5"):
        os.makedirs(work / directory)
    return work


async def wait_until_commands_run(work: Path, *directories: str) -> None:
    await wait_until(
        lambda: all(running_in(work / directory) for directory in directories),
        what=f"commands running in {directories}",
    )


def mock_bodies(mock: Any) -> list[Any]:
    return [request.json() for request in mock.requests if request.method == "POST"]


def first_user_text_any(body: Any) -> str:
    """The first user message, whatever wire the server's default profile speaks."""
    for wire in ("openai_responses", "openai_chat", "anthropic", "gemini"):
        text = first_user_text(wire, body)
        if text:
            return text
    return ""
