"""The runtime embedded in a host program, and the README's examples run as written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import trio

from actors.kernel import ActorRef, Runtime
from tests.kernel.sample_actors import Add, Recorder, Total
from tests.waiting import HANG_GUARD

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("embed_*.py"))
EXPECTED_OUTPUT = {"embed_async_with.py": "total: 42\n", "embed_nursery.py": "reply: HELLO\n"}


async def test_runtime_started_in_the_hosts_own_nursery() -> None:
    host_work: list[str] = []

    async def hosts_own_task() -> None:
        host_work.append("the host's own task ran")

    async with trio.open_nursery() as host:
        rt = await host.start(Runtime().run)
        host.start_soon(hosts_own_task)
        ref = await rt.spawn(Recorder(), name="embedded")
        await ref.tell(Add(41))
        await ref.tell(Add(1))
        assert await ref.ask(Total()) == 42
        await rt.shutdown()
        assert not ref.alive
    assert host_work == ["the host's own task ran"]


async def test_hosts_own_exception_propagates_unwrapped_after_shutdown() -> None:
    spawned: list[ActorRef] = []
    with pytest.raises(KeyError):
        async with Runtime() as rt:
            spawned.append(await rt.spawn(Recorder()))
            raise KeyError("the host's bug")
    assert spawned and not spawned[0].alive


async def test_shutdown_after_the_host_cancelled_the_runtime_returns_at_once() -> None:
    rt = Runtime()
    async with trio.open_nursery() as host:
        await host.start(rt.run)
        ref = await rt.spawn(Recorder())
        host.cancel_scope.cancel()
    assert not ref.alive
    with trio.fail_after(HANG_GUARD):
        await rt.shutdown()


def test_readme_embeds_each_example_verbatim() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(EXAMPLES) >= 2
    for example in EXAMPLES:
        assert example.read_text().strip() in readme, f"{example.name} differs from README"


def test_examples_run() -> None:
    assert sorted(EXPECTED_OUTPUT) == [example.name for example in EXAMPLES]
    for example in EXAMPLES:
        done = subprocess.run(
            [sys.executable, str(example)], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == EXPECTED_OUTPUT[example.name]
