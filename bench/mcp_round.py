"""MCP tool round benchmark: a session's tool round through an MCP server over
stdio against the same round with a native tool, in the same run.

    python bench/mcp_round.py          # a table
    python bench/mcp_round.py --json   # one JSON object

The scripted provider (another process) asks for N rounds of a tool that does
nothing: ``noop`` (native, in-process) on one side, ``bench__noop`` (the MCP SDK
fixture server, a child process over stdio) on the other. Each run is timed from
the first tool call to the end of the input, so the server's start is not counted;
sides alternate (ABBA) after a warm-up, and figures give min and median.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.kernel import Runtime
from actors.models import RetryPolicy, open_gateway
from actors.models.config import endpoint
from actors.session.actor import SessionActor
from actors.session.profiles import anthropic_profile
from bench.mock_provider import NOOP_TOOL, start_scripted
from bench.report import Figure, Samples, compare, emit, parse_args, ratios, sample_figures
from environments.local import LocalEnvironment
from protocol.events import ProcessingEndEvent, ToolCallStartEvent
from protocol.mcp import McpServerConfig
from protocol.session import CloseSession, SessionConfig, Submit, Subscribe

SERVER = Path(__file__).resolve().parents[1] / "tests" / "mcp" / "fixture_server.py"


def script(tool: str, rounds: int) -> dict[str, object]:
    calls = [{"tool_calls": [{"name": tool, "arguments": {}}]} for _ in range(rounds)]
    return {"turns": [*calls, {"text": "done"}], "repeat": False}


async def timed_rounds(url: str, mcp: bool, workdir: Path) -> tuple[float, float]:
    """Wall and client CPU seconds from the first tool call to the input's end."""
    async with Runtime() as runtime:
        ep = endpoint("anthropic", url, "bench-key")
        async with open_gateway(runtime, ep, RetryPolicy(max_retries=0)) as gateway:
            env = await runtime.spawn(LocalEnvironment(workdir))
            profile = anthropic_profile("mock-model")
            profile.registry.register(NOOP_TOOL)
            servers = [McpServerConfig("bench", command=[sys.executable, str(SERVER)])]
            config = SessionConfig(enable_loop_detection=False, mcp_servers=servers if mcp else [])
            session = await runtime.spawn(SessionActor(profile, env, gateway, config))
            events = await session.ask(Subscribe())
            await session.tell(Submit("run the rounds"))
            wall = cpu = None
            async for event in events:
                if isinstance(event.data, ToolCallStartEvent) and wall is None:
                    wall, cpu = time.perf_counter(), time.process_time()
                if isinstance(event.data, ProcessingEndEvent):
                    break
            if wall is None or cpu is None:
                raise RuntimeError("the scripted provider asked for no tool call")
            taken = time.perf_counter() - wall, time.process_time() - cpu
            await session.ask(CloseSession())
            return taken


def mcp_round_figures(rounds: int, repeats: int) -> list[Figure]:
    """Measure both sides (alternating, after a warm-up) and give their figures;
    ``bench/loop.py`` reports them too."""
    cpu: dict[str, list[float]] = {"native": [], "mcp": []}
    with tempfile.TemporaryDirectory() as directory:

        def side(name: str, tool: str, mcp: bool) -> Callable[[], float]:
            def run() -> float:
                # The provider's script is used up by one run: a fresh one each time,
                # started outside the timed part.
                process, url = start_scripted(script(tool, rounds))
                try:
                    wall, used = trio.run(timed_rounds, url, mcp, Path(directory))
                finally:
                    process.terminate()
                    process.wait()
                cpu[name].append(used)
                return wall

            return run

        walls = compare(
            {"native": side("native", "noop", False), "mcp": side("mcp", "bench__noop", True)},
            repeats,
        )
    per = 1000 / rounds
    native = Samples([wall * per for wall in walls["native"].values])
    mcp = Samples([wall * per for wall in walls["mcp"].values])
    return [
        Figure("mcp_rounds", "MCP bench: tool rounds per run", rounds, ""),
        *sample_figures("native_ms_per_round", "native round wall", native, "ms"),
        *sample_figures("mcp_ms_per_round", "MCP stdio round wall", mcp, "ms"),
        *sample_figures(
            "mcp_wall_ratio", "MCP / native wall", ratios(walls["mcp"], walls["native"]), "x"
        ),
        *sample_figures(
            "mcp_cpu_ratio",
            "MCP / native client CPU",
            ratios(Samples(cpu["mcp"][1:]), Samples(cpu["native"][1:])),
            "x",
        ),
    ]


def main() -> None:
    args = parse_args((__doc__ or "").splitlines()[0])
    rounds, repeats = (10, 2) if args.quick else (50, 4)
    emit("MCP tool round against the native tool round", mcp_round_figures(rounds, repeats),
         args.json)  # fmt: skip


if __name__ == "__main__":
    main()
