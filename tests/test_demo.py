"""The demo shows a parent and three parallel subagents doing real work."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from actors.commands.demo import run_demo, scripted_model
from actors.commands.errors import CommandError
from tests.environments.helpers import alive
from tests.waiting import HANG_GUARD, wait_until_gone


async def test_demo_runs_three_subagents_to_completion() -> None:
    out = io.StringIO()
    with trio.fail_after(60):
        assert await run_demo(out, pace=0.0) == 0
    text = out.getvalue()
    assert text.count("subagent completed: /sessions/demo/agents/a-") == 3
    for name in ("fib", "primes", "words"):
        assert f"python3 {name}.py" in text
    assert "0 1 1 2 3 5 8 13 21 34" in text
    assert (
        "files: ['fib.out', 'fib.py', 'primes.out', 'primes.py', 'words.out', 'words.py']" in text
    )


def _children_running(pid: int, marker: bytes) -> list[int]:
    """The child processes of ``pid`` whose command line holds ``marker``."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(c) for c in children if marker in Path(f"/proc/{c}/cmdline").read_bytes()]


async def test_the_scripted_model_is_a_process_that_ends_with_the_demo(tmp_path: Path) -> None:
    """The demo runs ``troupe mock-llm`` as a child process (no product module imports
    the scripted provider); killed outright, the demo leaves no provider running."""
    demo = await trio.lowlevel.open_process(
        [sys.executable, "-m", "actors.cli", "demo", "--pace", "60"],
        stdout=subprocess.PIPE, cwd=tmp_path,
    )  # fmt: skip
    try:
        assert demo.stdout is not None
        seen = b""
        with trio.fail_after(HANG_GUARD):
            while b"troupe mock-llm at http://127.0.0.1:" not in seen:
                chunk = await demo.stdout.receive_some()
                assert chunk, seen.decode()
                seen += chunk
        provider = _children_running(demo.pid, b"mock-llm")
        assert len(provider) == 1 and alive(provider) == provider
    finally:
        demo.kill()  # outright: no exit path of the demo's own runs
        await demo.wait()
    await wait_until_gone(provider)


async def test_a_scripted_model_that_cannot_start_is_one_clear_error() -> None:
    with scripted_model({"turns": "not a list"}) as model, pytest.raises(CommandError) as raised:
        await run_demo(io.StringIO(), pace=0.0, model=model)
    assert raised.value.message == "the scripted model did not start (it printed '')"
