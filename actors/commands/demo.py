"""``troupe demo``: what Troupe does, in under a minute, with no API key.

A scripted provider (the same ``troupe mock-llm`` the tests use) stands in for the
model; everything else is real: a parent session on a real local environment in a
temporary directory spawns three subagents that run in parallel, each writing a
small program and running it, then the parent checks their work. Every event of
the parent and of each subagent is printed as it happens.

The scripted provider runs as its own process (``troupe mock-llm`` on a free
loopback port), and the demo talks to it over HTTP as to any provider: no product
module imports the scripted provider (tests/test_layers.py holds that), so the
demo's script is plain data in the provider's script format (docs/mock-llm.md).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import trio

from actors.commands.errors import CommandError

if TYPE_CHECKING:
    from actors.commands.render import TextRenderer
    from actors.kernel import ActorRef, Runtime

STARTUP_GUARD = 60
"""Seconds the scripted provider may take to print its URL before the demo gives up
(a hang guard: it takes well under one)."""

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


def demo_script(pace: float = 0.6) -> dict[str, Any]:
    """The model's side of the demo, in the scripted provider's script format: the
    parent's turns and each subagent's, each answered after ``pace`` seconds."""
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
    return {"conversations": [parent, *children]}


def _end_with_parent() -> Callable[[], None] | None:
    """What the child runs before it starts: SIGTERM to it when the demo's process
    ends, even by SIGKILL, so no scripted provider outlives its demo (Linux; None
    elsewhere, where the demo's own exit path ends it). Looked up here, so that the
    child between fork and exec only makes the call (no import, no lock)."""
    if sys.platform != "linux":
        return None
    import ctypes
    import signal

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    set_death_signal, sigterm = 1, int(signal.SIGTERM)  # PR_SET_PDEATHSIG
    return lambda: prctl(set_death_signal, sigterm)


class ScriptedModel:
    """``troupe mock-llm`` as a child process: started at once, so it boots while the
    demo loads the rest of Troupe; its URL is read when the demo needs it."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process

    async def base_url(self) -> str:
        """The URL the child printed (a :class:`CommandError` if it printed none)."""
        stdout = self.process.stdout
        assert stdout is not None
        line = b""
        with trio.move_on_after(STARTUP_GUARD):
            line = await trio.to_thread.run_sync(stdout.readline, abandon_on_cancel=True)
        url = line.decode(errors="replace").strip()
        if not url.startswith("http://"):
            raise CommandError(f"the scripted model did not start (it printed {url!r})")
        return url


@contextmanager
def scripted_model(script: dict[str, Any]) -> Iterator[ScriptedModel]:
    """``troupe mock-llm --script`` serving ``script`` on a free loopback port, for
    the duration; the child is ended on the way out."""
    with tempfile.TemporaryDirectory(prefix="troupe-demo-model-") as directory:
        path = Path(directory, "script.json")
        path.write_text(json.dumps(script))
        argv = [sys.executable, "-m", "actors.cli", "mock-llm", "--script", str(path)]
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            start_new_session=True,  # the terminal's Ctrl-C is for the demo, which ends it
            preexec_fn=_end_with_parent(),
        )
        try:
            yield ScriptedModel(process)
        finally:
            process.terminate()
            try:
                process.wait(timeout=STARTUP_GUARD)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            assert process.stdout is not None
            process.stdout.close()


async def _follow(
    printer: TextRenderer, who: str, session: ActorRef, runtime: Runtime, nursery: trio.Nursery
) -> None:
    """Print a session's events; follow each subagent it spawns the same way."""
    from protocol.events import ProcessingEndEvent, SubagentSpawnedEvent
    from protocol.session import Subscribe

    async for event in await session.ask(Subscribe(after_seq=0)):
        printer.show(event.data, who)
        match event.data:
            case SubagentSpawnedEvent(agent_id=agent_id, address=address):
                child = runtime.ref(address)
                nursery.start_soon(_follow, printer, agent_id, child, runtime, nursery)
            case ProcessingEndEvent() if who == "parent":
                return


async def run_demo(
    out: TextIO = sys.stdout, pace: float = 0.6, model: ScriptedModel | None = None
) -> int:
    """The demo against ``model`` (one is started for it when None)."""
    if model is None:
        with scripted_model(demo_script(pace)) as started:
            return await run_demo(out, pace, started)
    # The rest of Troupe loads here, while the scripted provider boots.
    from actors.commands.render import TextRenderer
    from actors.kernel import Runtime
    from actors.models import open_gateway
    from actors.models.config import endpoint
    from actors.session.actor import SessionActor
    from actors.session.profiles import anthropic_profile
    from environments.local import LocalEnvironment
    from protocol.session import Submit, WaitIdle

    printer = TextRenderer(out, labelled=True)
    with tempfile.TemporaryDirectory(prefix="troupe-demo-") as directory:
        workdir = Path(directory)
        print(f"Troupe demo: a parent session and three subagents, in {workdir}", file=out)
        async with Runtime() as runtime:
            base_url = await model.base_url()
            print(f"(the model is scripted: troupe mock-llm at {base_url})\n", file=out)
            ep = endpoint("anthropic", base_url, "demo-key")
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
    """``troupe demo``: the scripted provider starts first, so it boots while the
    demo loads."""
    try:
        with scripted_model(demo_script(args.pace)) as model:
            return trio.run(run_demo, sys.stdout, args.pace, model)
    except KeyboardInterrupt:
        return 130
