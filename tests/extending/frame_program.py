"""Run by test_protocol_frame.py on copies where ``protocol/events.py`` has the toy
event of docs/extending.md (``NoteEvent``, kind ``note``): the event validates, and a
session of a real server emits it, which a WebSocket client receives typed, in
JSON and in msgpack, live and replayed from the store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import msgspec
import trio

from actors.mockllm import Script, serve_mock_llm
from actors.server.models import ModelSettings
from actors.server.server import RunningServer, ServerConfig, run_server
from protocol import events
from protocol.client import TroupeClient, connect
from protocol.wire import CreateSession, Event, SubscribeSession

HANG_GUARD = 60


async def first_note(client: TroupeClient) -> Event:
    async for event in client.events():
        if event.kind == "note":
            return event
    raise AssertionError("the connection ended before the note")


async def main(root: Path) -> None:
    note_type: Any = events.EVENT_TYPES["note"]
    note = note_type(text="remember the milk")
    assert events.event_data("note", {"text": "remember the milk"}) == note
    try:
        events.event_data("note", {"text": 3})
    except msgspec.ValidationError as error:
        print("refused:", error)
    else:
        raise AssertionError("a note whose text is a number was accepted")
    (root / "work").mkdir()
    models = ModelSettings(profile="openai", base_url="", api_key="test-key")
    async with serve_mock_llm(Script()) as mock, trio.open_nursery() as nursery:
        models = msgspec.structs.replace(models, base_url=mock.base_url)
        config = ServerConfig(data_dir=root / "data", port=0, working_dir=root / "work",
                              models=models, advertise=False)  # fmt: skip
        server: RunningServer = await nursery.start(run_server, config)
        with trio.fail_after(HANG_GUARD):
            async with connect(server.url, server.token) as client:
                created = await client.request(CreateSession)
                session = created.session.session_id
                await client.request(SubscribeSession, session=session)
                actor = server.registry.record(session).actor
                assert actor is not None
                actor.emit(note)  # what the code that has something to say calls
                live = await first_note(client)
                assert live.body() == note, live
            async with connect(server.url, server.token, encoding="msgpack") as again:
                await again.request(SubscribeSession, session=session, after_seq=0)
                replayed = await first_note(again)
                assert (replayed.seq, replayed.body()) == (live.seq, note), replayed
        print("note seq", live.seq, "live and replayed")
        server.stop()


if __name__ == "__main__":
    trio.run(main, Path(sys.argv[1]))
