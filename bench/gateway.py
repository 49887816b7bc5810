"""Gateway benchmark: durable session events delivered over WebSocket, against raw
trio-websocket frames of the same size in the same run, and the store's write rate.

    python bench/gateway.py          # a table
    python bench/gateway.py --json   # one JSON object

It ends with the flood figures of :mod:`bench.flood` (server RSS under three
subscribers that never read, and their 4008 closes).

Events are emitted into a real session's event hub (the session's own loop is
not the subject here), go through the store (each is committed before it is
sent), the subscription and the connection's outbox, and are received by plain
trio-websocket clients that count frames. The raw baseline is a trio-websocket
server sending pre-encoded frames of the same size to the same number of clients.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import trio
from trio_websocket import open_websocket_url, serve_websocket

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import trio.lowlevel

from actors.server.models import ModelSettings
from actors.server.server import ServerConfig, run_server
from actors.session.actor import SessionActor
from actors.session.events import EventHub
from actors.store import open_store
from bench.flood import flood_figures
from bench.report import Figure, compare, emit, parse_args, ratios, sample_figures
from protocol.events import SessionEvent, WarningEvent, event_fields
from protocol.wire import Codec, Event

PAYLOAD = "x" * 120
EMIT_BATCH = 256
TARGET = 0.5


def frame_size() -> int:
    fields = event_fields(WarningEvent(PAYLOAD))
    event = Event("s-00000000", "s-00000000", 1, time.time(), "warning", fields)
    return len(Codec("json").encode(event))


async def raw_rate(count: int, clients: int, size: int) -> float:
    """Frames per second per client: a bare trio-websocket server, pre-encoded frames."""
    message = "y" * size
    done = trio.Semaphore(0)

    async def handler(request) -> None:
        ws = await request.accept()
        await ws.get_message()
        for _ in range(count):
            await ws.send_message(message)
        await ws.get_message()

    async with trio.open_nursery() as nursery:
        server = await nursery.start(serve_websocket, handler, "127.0.0.1", 0, None)
        url = f"ws://127.0.0.1:{server.port}/"
        ready = trio.Event()
        opened = trio.Semaphore(0)

        async def client() -> None:
            async with open_websocket_url(url, message_queue_size=64) as ws:
                opened.release()
                await ready.wait()
                await ws.send_message("go")
                for _ in range(count):
                    await ws.get_message()
                await ws.send_message("bye")
                done.release()

        for _ in range(clients):
            nursery.start_soon(client)
        for _ in range(clients):
            await opened.acquire()
        start = time.perf_counter()
        ready.set()
        for _ in range(clients):
            await done.acquire()
        elapsed = time.perf_counter() - start
        nursery.cancel_scope.cancel()
    return count / elapsed


async def troupe_rate(count: int, clients: int, subagent: bool = False) -> float:
    """Durable events per second per subscriber, through store, subscription, outbox;
    with ``subagent``, the events are a subagent's (stored under its own id, the
    subscribers subscribed to its address)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = ServerConfig(
            data_dir=root,
            port=0,
            working_dir=root,
            models=ModelSettings("openai", "http://127.0.0.1:9", "bench"),
            advertise=False,
            outbox_bytes=4 << 20,
            slow_client_timeout=60.0,  # a loaded machine must not make a reader "slow"
        )
        async with trio.open_nursery() as nursery:
            server = await nursery.start(run_server, config)
            record = await server.registry.create(None, None, None, None)
            assert record.actor is not None
            session, hub = record.row.id, record.actor.hub
            if subagent:
                session, hub = await start_subagent(record.actor)
            headers = [(b"authorization", f"Bearer {server.token}".encode())]
            opened = trio.Semaphore(0)
            finished = trio.Semaphore(0)
            first_seq = hub.last_seq + 1

            async def subscriber() -> None:
                async with open_websocket_url(
                    server.url, extra_headers=headers, message_queue_size=64
                ) as ws:
                    await ws.send_message(json.dumps({"type": "hello", "version": 1}))
                    await ws.get_message()
                    await ws.send_message(
                        json.dumps(
                            {"type": "subscribe", "id": 1, "session": session,
                             "after_seq": first_seq - 1}
                        )
                    )  # fmt: skip
                    await ws.get_message()  # subscribed
                    opened.release()
                    for _ in range(count):
                        await ws.get_message()
                    finished.release()

            async with trio.open_nursery() as clients_nursery:
                for _ in range(clients):
                    clients_nursery.start_soon(subscriber)
                for _ in range(clients):
                    await opened.acquire()
                start = time.perf_counter()
                for n in range(count):
                    hub.emit(WarningEvent(PAYLOAD))
                    if n % EMIT_BATCH == EMIT_BATCH - 1:
                        await trio.lowlevel.checkpoint()
                for _ in range(clients):
                    await finished.acquire()
                elapsed = time.perf_counter() - start
            server.stop()
    return count / elapsed


async def start_subagent(parent: SessionActor) -> tuple[str, EventHub]:
    """Spawn a subagent of ``parent`` as its spawn_agent tool would: its address and
    its event hub (the server's hook has given it the store's sink)."""
    started: list[tuple[SessionActor, str]] = []
    hook = parent.subagent_hook
    assert hook is not None

    def capture(child: SessionActor, address: str) -> None:
        started.append((child, address))
        hook(child, address)

    parent.subagent_hook = capture
    await parent.spawn_subagent("a-1", None, None, None, depth_limit=1)
    child, address = started[0]
    assert child.hub.last_seq >= 1, "spawned once started: its session_start is out"
    return address, child.hub


async def store_rate(count: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        async with open_store(Path(tmp)) as store:
            now = time.time()
            data = WarningEvent(PAYLOAD)
            start = time.perf_counter()
            for seq in range(1, count + 1):
                store.append_event(SessionEvent("s-bench", seq, now, data))
                if seq % EMIT_BATCH == 0:
                    await trio.lowlevel.checkpoint()
            await store.flush()
            elapsed = time.perf_counter() - start
    return count / elapsed


def measure(quick: bool) -> list[Figure]:
    count = 5_000 if quick else 30_000
    repeats = 3 if quick else 5
    size = frame_size()
    samples = compare(
        {
            "raw_1": lambda: trio.run(raw_rate, count, 1, size),
            "troupe_1": lambda: trio.run(troupe_rate, count, 1),
            "raw_10": lambda: trio.run(raw_rate, count // 5, 10, size),
            "troupe_10": lambda: trio.run(troupe_rate, count // 5, 10),
            "troupe_sub_1": lambda: trio.run(troupe_rate, count, 1, True),
        },
        repeats,
    )
    ratio_1 = ratios(samples["troupe_1"], samples["raw_1"])
    ratio_10 = ratios(samples["troupe_10"], samples["raw_10"])
    ratio_sub = ratios(samples["troupe_sub_1"], samples["raw_1"])
    stored = compare({"store": lambda: trio.run(store_rate, count * 2)}, repeats)["store"]
    return [
        Figure("frame_bytes", "event frame size", size, "bytes"),
        Figure("repeats", "repeats per side (alternating, after a warm-up)", repeats, ""),
        *sample_figures("raw_frames_per_s_1", "raw trio-websocket frames/s, 1 client",
                        samples["raw_1"], "/s"),
        *sample_figures("events_per_s_1", "durable events/s, 1 subscriber",
                        samples["troupe_1"], "/s"),
        Figure("ratio_1_min", "  ratio to raw, 1 subscriber (min)", ratio_1.min, "x"),
        Figure("ratio_1", "  ratio to raw, 1 subscriber (median)", ratio_1.median, "x",
               f">= {TARGET}", ratio_1.median >= TARGET),
        *sample_figures("subagent_events_per_s_1", "a subagent's durable events/s, 1 subscriber",
                        samples["troupe_sub_1"], "/s"),
        Figure("ratio_sub_1_min", "  ratio to raw, subagent (min)", ratio_sub.min, "x"),
        Figure("ratio_sub_1", "  ratio to raw, subagent (median)", ratio_sub.median, "x",
               f">= {TARGET}", ratio_sub.median >= TARGET),
        *sample_figures("raw_frames_per_s_10", "raw frames/s per client, 10 clients",
                        samples["raw_10"], "/s"),
        *sample_figures("events_per_s_10", "durable events/s per subscriber, 10",
                        samples["troupe_10"], "/s"),
        Figure("ratio_10_min", "  ratio to raw, 10 subscribers (min)", ratio_10.min, "x"),
        Figure("ratio_10", "  ratio to raw, 10 subscribers (median)", ratio_10.median, "x",
               f">= {TARGET}", ratio_10.median >= TARGET),
        *sample_figures("store_events_per_s", "events/s written to the store", stored, "/s"),
        *flood_figures(),
    ]  # fmt: skip


def main() -> None:
    args = parse_args(__doc__ or "", sys.argv[1:])
    figures = measure(args.quick)
    emit("Troupe gateway", figures, args.json)


if __name__ == "__main__":
    main()
