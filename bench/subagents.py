"""Subagent benchmark: one parent fanning out to many subagents, against as many
independent sessions doing the same rounds, and memory per subagent session.

    python bench/subagents.py          # a table
    python bench/subagents.py --json   # one JSON object

The scripted provider runs in another process (``troupe mock-llm --script``): the
parent's conversation spawns N subagents in one turn and waits for them; each
subagent's conversation is R rounds of a trivial tool, then text. The baseline is
N independent top-level sessions doing the same R rounds, on the same gateway.
"""

from __future__ import annotations

import gc
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.kernel import ActorRef, Runtime
from actors.models import open_gateway
from actors.models.config import endpoint
from actors.session.actor import SessionActor
from actors.session.profiles import ProviderProfile, anthropic_profile
from bench.mock_provider import NOOP_TOOL, start_scripted
from bench.report import Figure, compare, emit, parse_args, ratios, sample_figures
from environments.local import LocalEnvironment
from protocol.session import SessionConfig, Submit, WaitIdle

CHILD_TASK = "child-task: run the rounds"


def script(agents: int, rounds: int) -> dict[str, Any]:
    noop_turn = {"tool_calls": [{"name": "noop", "arguments": {}}]}
    spawns = [{"name": "spawn_agent", "arguments": {"task": CHILD_TASK}} for _ in range(agents)]
    ids = [f"a-{n}" for n in range(1, agents + 1)]
    wait = {"name": "wait", "arguments": {"agent_ids": ids}}
    return {
        "conversations": [
            {
                "match": "PARENT",
                "turns": [{"tool_calls": spawns}, {"tool_calls": [wait]}, {"text": "all done"}],
            },
            {"match": "child-task", "turns": [noop_turn] * rounds + [{"text": "child done"}]},
        ]
    }


def profile() -> ProviderProfile:
    base = anthropic_profile("mock-model")
    base.registry.register(NOOP_TOOL)
    return base


async def run(url: str, workdir: Path, agents: int, fan_out: bool) -> float:
    """Seconds from starting the sessions to the last one going idle.

    The timer starts before any session is spawned on both sides: the fan-out's
    subagents start inside it, so the independent sessions must too."""
    config = SessionConfig(max_subagents=agents, enable_loop_detection=False)
    async with Runtime() as runtime:
        ep = endpoint("anthropic", url, "bench-key", max_concurrency=32)
        async with open_gateway(runtime, ep) as gateway:
            env = await runtime.spawn(LocalEnvironment(workdir))
            count = 1 if fan_out else agents
            text = "PARENT: fan out" if fan_out else CHILD_TASK
            start = time.perf_counter()
            sessions = [
                await runtime.spawn(SessionActor(profile(), env, gateway, config))
                for _ in range(count)
            ]
            async with trio.open_nursery() as nursery:
                for session in sessions:
                    nursery.start_soon(finish, session, text)
            return time.perf_counter() - start


async def finish(session: ActorRef, text: str) -> None:
    await session.tell(Submit(text))
    outcome = await session.ask(WaitIdle(), timeout=None)
    if not outcome.success:
        raise RuntimeError(f"the run failed: {outcome.stop_reason} {outcome.error}")


async def bytes_per_session(url: str, workdir: Path, count: int) -> float:
    """Memory of an idle session actor (what each subagent is), by tracemalloc."""
    async with Runtime() as runtime:
        ep = endpoint("anthropic", url, "bench-key")
        async with open_gateway(runtime, ep) as gateway:
            env = await runtime.spawn(LocalEnvironment(workdir))
            await runtime.spawn(SessionActor(profile(), env, gateway))  # warm caches
            gc.collect()
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(count):
                await runtime.spawn(SessionActor(profile(), env, gateway))
            gc.collect()
            used = tracemalloc.get_traced_memory()[0] - before
            tracemalloc.stop()
            return used / count


def main() -> None:
    args = parse_args((__doc__ or "").splitlines()[0])
    agents, rounds = (20, 5) if args.quick else (100, 10)
    repeats = 3 if args.quick else 5
    with tempfile.TemporaryDirectory() as directory:
        workdir = Path(directory)
        process, url = start_scripted(script(agents, rounds))
        try:
            samples = compare(
                {
                    "fan_out": lambda: trio.run(run, url, workdir, agents, True),
                    "independent": lambda: trio.run(run, url, workdir, agents, False),
                },
                repeats,
            )
            per_session = trio.run(bytes_per_session, url, workdir, 50)
        finally:
            process.terminate()
            process.wait()
    fan_out, independent = samples["fan_out"], samples["independent"]
    ratio = ratios(fan_out, independent)
    figures = [
        Figure("subagents", "subagents", agents, ""),
        Figure("rounds_each", "rounds each", rounds, ""),
        Figure("repeats", "repeats per side (alternating, after a warm-up)", repeats, ""),
        *sample_figures("fan_out_s", f"1 parent, {agents} subagents", fan_out, "s"),
        *sample_figures("independent_s", f"{agents} independent sessions", independent, "s"),
        *sample_figures("fan_out_ratio", "fan-out / independent", ratio, "x"),
        Figure("bytes_per_subagent", "memory per idle subagent session", per_session, "B"),
    ]
    emit("Troupe subagents", figures, args.json)


if __name__ == "__main__":
    main()
