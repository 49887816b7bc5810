"""The flood: a real ``troupe serve`` process runs ``seq 1 3000000`` three times in
one input while three subscribers never read. Reports the server's RSS (baseline,
peak during the flood, after the slow clients were closed) and how many of the
sleepers were closed with 4008 (``bench/gateway.py`` prints these figures).

The sleepers read nothing until :data:`BEHIND_FOR` seconds after the flood ended
(they fell behind during it), then read what was on the wire and the close.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from contextlib import AsyncExitStack
from pathlib import Path

import msgspec
import trio
from trio_websocket import ConnectionClosed, WebSocketConnection, open_websocket_url

from actors.mockllm import Script, serve_mock_llm
from bench.report import Figure
from protocol.client import connect
from protocol.wire import CLOSE_TOO_SLOW, CreateSession, SubmitInput, SubscribeSession

FLOOD = "seq 1 3000000"
ROUNDS = 3
SLEEPERS = 3
BEHIND_FOR = 10.0
MB = 1 << 20
REPO = Path(__file__).resolve().parents[1]
GUARD = 300.0


def rss(pid: int) -> int:
    """Resident set size of ``pid``, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


class FloodFigures(msgspec.Struct, frozen=True):
    baseline: int
    peak: int
    after: int
    closed_too_slow: int


async def _serve(data_dir: Path, work: Path, base_url: str) -> tuple[trio.Process, str]:
    command = [
        sys.executable, "-m", "actors.cli", "serve", "--port", "0", "--data-dir", str(data_dir),
        "--workdir", str(work), "--base-url", base_url, "--api-key", "bench-key",
    ]  # fmt: skip
    process = await trio.lowlevel.open_process(command, stdout=subprocess.PIPE, cwd=REPO)
    assert process.stdout is not None
    printed = b""
    with trio.fail_after(60):
        while b"\n" not in printed:
            chunk = await process.stdout.receive_some()
            if not chunk:
                raise RuntimeError(f"troupe serve exited: {process.returncode}")
            printed += chunk
    return process, printed.decode().splitlines()[0].rsplit(" ", 1)[-1]


async def _closed_too_slow(sleeper: WebSocketConnection) -> bool:
    try:
        with trio.fail_after(60):
            while True:
                await sleeper.get_message()
    except ConnectionClosed as closed:
        return closed.reason is not None and closed.reason.code == CLOSE_TOO_SLOW
    except trio.TooSlowError:
        return False


async def flood() -> FloodFigures:
    turns: list[dict[str, object]] = [
        {"tool_calls": [{"name": "shell", "arguments": {"command": FLOOD}}]} for _ in range(ROUNDS)
    ]
    script = msgspec.convert({"turns": [*turns, {"text": "done"}], "repeat": True}, Script)
    with tempfile.TemporaryDirectory() as tmp:
        data_dir, work = Path(tmp) / "data", Path(tmp) / "work"
        work.mkdir()
        async with serve_mock_llm(script) as mock:
            process, url = await _serve(data_dir, work, mock.base_url)
            try:
                with trio.fail_after(GUARD):
                    return await _run(process.pid, url, (data_dir / "token").read_text().strip())
            finally:
                process.kill()
                await process.wait()


async def _run(pid: int, url: str, token: str) -> FloodFigures:
    headers = [(b"authorization", f"Bearer {token}".encode())]
    async with connect(url, token, max_frame_bytes=256 * MB) as watcher:
        session = (await watcher.request(CreateSession)).session.session_id
        await watcher.request(SubscribeSession, session=session, after_seq=0)
        async with AsyncExitStack() as stack:
            sleepers: list[WebSocketConnection] = []
            for _ in range(SLEEPERS):
                sleeper = await stack.enter_async_context(
                    open_websocket_url(
                        url, extra_headers=headers, message_queue_size=1,
                        max_message_size=256 * MB,
                    )
                )  # fmt: skip
                sleepers.append(sleeper)
                await sleeper.send_message(json.dumps({"type": "hello", "version": 1}))
                await sleeper.get_message()
                subscribe = {"type": "subscribe", "id": 1, "session": session}
                await sleeper.send_message(json.dumps(subscribe))
            await trio.sleep(1)
            baseline = peak = rss(pid)
            async with trio.open_nursery() as nursery:

                async def sample() -> None:
                    nonlocal peak
                    while True:
                        peak = max(peak, rss(pid))
                        await trio.sleep(0.05)

                nursery.start_soon(sample)
                await watcher.request(SubmitInput, session=session, text="flood")
                async for event in watcher.events():
                    if event.kind == "processing_end":
                        break
                nursery.cancel_scope.cancel()
            await trio.sleep(BEHIND_FOR)
            closed = [await _closed_too_slow(sleeper) for sleeper in sleepers]
        await trio.sleep(1)
        return FloodFigures(baseline, peak, rss(pid), sum(closed))


def flood_figures() -> list[Figure]:
    measured = trio.run(flood)
    during = (measured.peak - measured.baseline) / MB
    after = (measured.after - measured.baseline) / MB
    return [
        Figure("flood_rss_baseline_mb", "flood: server RSS before", measured.baseline / MB, "MB"),
        Figure("flood_rss_peak_mb", "flood: server RSS peak", measured.peak / MB, "MB"),
        Figure("flood_rss_during_mb", "flood: peak over baseline", during, "MB",
               "< 150", during < 150),
        Figure("flood_rss_after_mb", "flood: after, over baseline", after, "MB",
               "< 50", after < 50),
        Figure("flood_closed_4008", f"flood: sleepers closed with 4008 of {SLEEPERS}",
               measured.closed_too_slow, "", f"= {SLEEPERS}",
               measured.closed_too_slow == SLEEPERS),
    ]  # fmt: skip
