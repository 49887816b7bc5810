"""``troupe demo``: what Troupe does, in under a minute, with no API key.

A scripted provider (the same ``troupe mock-llm`` the tests use) stands in for the
model; everything else is real: a parent session on a real local environment in a
temporary directory spawns three subagents that run in parallel, each writing a
small program and running it, then the parent checks their work. Every event of
the parent and of each subagent is printed as it happens.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

import msgspec
import trio

from actors.commands.render import TextRenderer
from actors.kernel import ActorRef, Runtime
from actors.mockllm import Script, serve_mock_llm
from actors.models import open_gateway
from actors.models.config import endpoint
from actors.session.actor import SessionActor
from actors.session.profiles import anthropic_profile
from environments.local import LocalEnvironment
from protocol.events import ProcessingEndEvent, SubagentSpawnedEvent
from protocol.session import Submit, Subscribe, WaitIdle

PROGRAMS = {
    "fib": (
        "a, b = 0, 1\nfor _ in range(15):\n    print(a, end=' ')\n    a, b = b, a + b\nprint()\n"
    ),
    "primes": "print([n for n in range(2, 60) if all(n % d for d in range(2, n))])\n",
    "words": (
        "text = 'the quick brown fox jumps over the lazy dog the end'\n"
        "counts = {w: text.split().count(w) for w in set(text.split())}\n"
        "print(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3])\n"
    ),
}


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def demo_script(pace: float = 0.6) -> Script:
    """The model's side of the demo: the parent's turns and each subagent's, each
    answered after ``pace`` seconds."""
    children = [
        {
            "match": f"Write {name}.py",
            "turns": [
                {
                    "reasoning": f"I'll write {name}.py, then run it to check.",
                    "tool_calls": [_call("write_file", file_path=f"{name}.py", content=code)],
                },
                {"tool_calls": [_call("shell", command=f"python3 {name}.py | tee {name}.out")]},
                {"text": f"{name}.py written and run; output saved to {name}.out."},
            ],
        }
        for name, code in PROGRAMS.items()
    ]
    spawns = [
        _call("spawn_agent", task=f"Write {name}.py and run it; keep its output in {name}.out.")
        for name in PROGRAMS
    ]
    parent = {
        "match": "Build three small programs",
        "turns": [
            {"reasoning": "Three independent tasks: one subagent each.", "tool_calls": spawns},
            {"tool_calls": [_call("wait", agent_ids=["a-1", "a-2", "a-3"], timeout_ms=60_000)]},
            {"tool_calls": [_call("shell", command="ls *.py *.out && cat *.out")]},
            {"text": "All three programs are written, run, and their outputs checked."},
        ],
    }
    for conversation in [parent, *children]:
        for turn in conversation["turns"]:
            turn["delay"] = pace  # a model takes a moment; the demo should be watchable
    return msgspec.convert({"conversations": [parent, *children]}, Script)


async def _follow(
    printer: TextRenderer, who: str, session: ActorRef, runtime: Runtime, nursery: trio.Nursery
) -> None:
    """Print a session's events; follow each subagent it spawns the same way."""
    async for event in await session.ask(Subscribe(after_seq=0)):
        printer.show(event.data, who)
        match event.data:
            case SubagentSpawnedEvent(agent_id=agent_id, address=address):
                child = runtime.ref(address)
                nursery.start_soon(_follow, printer, agent_id, child, runtime, nursery)
            case ProcessingEndEvent() if who == "parent":
                return


async def run_demo(out: TextIO = sys.stdout, pace: float = 0.6) -> int:
    printer = TextRenderer(out, labelled=True)
    with tempfile.TemporaryDirectory(prefix="troupe-demo-") as directory:
        workdir = Path(directory)
        print(f"Troupe demo: a parent session and three subagents, in {workdir}", file=out)
        async with Runtime() as runtime, serve_mock_llm(demo_script(pace)) as server:
            print(f"(the model is scripted: troupe mock-llm at {server.base_url})\n", file=out)
            ep = endpoint("anthropic", server.base_url, "demo-key")
            async with open_gateway(runtime, ep) as gateway:
                env = await runtime.spawn(LocalEnvironment(workdir), name="environments/local")
                parent = await runtime.spawn(
                    SessionActor(anthropic_profile("scripted-model"), env, gateway),
                    name="sessions/demo",
                )
                try:
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(_follow, printer, "parent", parent, runtime, nursery)
                        await parent.tell(Submit("Build three small programs in parallel."))
                        outcome = await parent.ask(WaitIdle(), timeout=120)
                        nursery.cancel_scope.cancel()
                finally:
                    printer.close()
        files = sorted(path.name for path in await trio.Path(workdir).iterdir())
    verdict = "done" if outcome.success else f"failed ({outcome.stop_reason})"
    print(file=out)
    elapsed = time.monotonic() - printer.started
    printer.status(outcome.success, f"{verdict} in {elapsed:.1f}s; files: {files}")
    return 0 if outcome.success else 1


def run(args: argparse.Namespace) -> int:
    """``troupe demo``."""
    try:
        return trio.run(run_demo, sys.stdout, args.pace)
    except KeyboardInterrupt:
        return 130
