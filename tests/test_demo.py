"""The demo shows a parent and three parallel subagents doing real work."""

from __future__ import annotations

import io

import trio

from actors.commands.demo import run_demo


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
