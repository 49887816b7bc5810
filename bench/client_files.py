"""What a client-served file read costs: a session's ``read_file`` round through
the client that created it (``client_operations``, a ``client_call`` frame and its
result over the WebSocket) against the same round read from the disk, in one run.

    python bench/client_files.py          # a table
    python bench/client_files.py --quick  # fewer rounds and repeats

Each sample is one session on an in-process server doing N rounds of ``read_file``
scripted by the mock provider (model turn, policy, tool, events), with the client
answering from memory; the two kinds alternate (which goes first swaps every
repeat) after one warm-up of each. The figure is wall time per round, min and
median, and the client-served over the disk ratio per repeat.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec
import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.mockllm import Script, serve_mock_llm
from actors.server.models import ModelSettings
from actors.server.server import ServerConfig, run_server
from protocol.client import TroupeClient, connect
from protocol.wire import (
    ClientCall,
    ClientCallError,
    CreateSession,
    SubmitInput,
    SubscribeSession,
)
from protocol.wire_client_calls import ReadTextFileCall

QUICK = "--quick" in sys.argv
ROUNDS = 10 if QUICK else 40
REPEATS = 2 if QUICK else 5


async def answer_from_memory(client: TroupeClient, text: str) -> None:
    async for call in client.calls():
        if isinstance(call, ClientCall) and isinstance(call.call, ReadTextFileCall):
            if call.call.path.endswith("/notes.txt"):
                await client.answer_call(call.id, {"content": text})
            else:  # project instruction files: none
                await client.answer_call(call.id, error=ClientCallError("file_not_found", "-"))


async def one_session(url: str, token: str, served: bool) -> float:
    """Seconds per round of one session's N reads."""
    async with connect(url, token) as client, trio.open_nursery() as nursery:
        nursery.start_soon(answer_from_memory, client, "from the editor\n" * 50)
        operations: list[Any] = ["read_text_file"] if served else []
        created = await client.request(CreateSession, client_operations=operations)
        session = created.session.session_id
        await client.request(SubscribeSession, session=session)
        started = time.perf_counter()
        await client.request(SubmitInput, session=session, text="read the notes")
        reads = 0
        async for event in client.events():
            if event.kind == "tool_call_end":
                assert not event.data["is_error"], event.data
                source = "editor" if served else "disk"
                assert f"from the {source}" in event.data["output"], event.data
                reads += 1
            if event.kind == "processing_end":
                break
        elapsed = time.perf_counter() - started
        assert reads == ROUNDS, f"{reads} reads, expected {ROUNDS}"
        nursery.cancel_scope.cancel()
    return elapsed / ROUNDS


async def main() -> None:
    read = {"tool_calls": [{"name": "read_file", "arguments": {"file_path": "notes.txt"}}]}
    turns = [read] * ROUNDS + [{"text": "done"}]  # by position in each conversation
    conversation = {"match": "read the notes", "turns": turns}
    script = msgspec.convert({"conversations": [conversation], "turns": [{"text": "?"}]}, Script)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch) / "work"
        work.mkdir()
        (work / "notes.txt").write_text("from the disk\n" * 50)
        async with serve_mock_llm(script) as mock, trio.open_nursery() as nursery:
            settings = ModelSettings("openai", mock.base_url, "test-key")
            config = ServerConfig(
                data_dir=Path(scratch) / "data", port=0, working_dir=work, models=settings
            )
            server = await nursery.start(run_server, config)
            samples: dict[bool, list[float]] = {False: [], True: []}
            for served in (False, True):  # warm both alike
                await one_session(server.url, server.token, served)
            ratios = []
            for repeat in range(REPEATS):
                order = (False, True) if repeat % 2 == 0 else (True, False)
                got = {kind: await one_session(server.url, server.token, kind) for kind in order}
                for kind, seconds in got.items():
                    samples[kind].append(seconds)
                ratios.append(got[True] / got[False])
            server.stop()
    print(f"read_file rounds per session: {ROUNDS}, repeats: {REPEATS}")
    for kind, label in ((False, "disk"), (True, "client-served")):
        ms = [s * 1000 for s in samples[kind]]
        print(f"{label:>14}: min {min(ms):.2f} ms/round, median {statistics.median(ms):.2f}")
    print(f"client-served / disk: min {min(ratios):.2f}x, median {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    trio.run(main)
