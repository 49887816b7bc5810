"""Compaction benchmark: client CPU per tool round with compaction on versus off.

    python bench/compaction.py          # a table
    python bench/compaction.py --json   # one JSON object
    python bench/compaction.py --quick  # fewer rounds and repeats (a smoke run)

The scripted provider runs in another process (``troupe mock-llm``), so the CPU
measured is the client's alone. A real session (Anthropic Messages wire, streamed)
does N rounds of ``read_file`` on a 4 KB file, three ways, interleaved in the same
run (:func:`bench.report.compare`):

- ``off``: ``compaction = "off"`` and a window the session never fills;
- ``between``: ``compaction = "auto"`` with the same window, which it never
  reaches: what the bookkeeping costs between compactions (the target is no
  measurable cost, a ratio of 1.0 within noise);
- ``compacting``: ``compaction = "auto"`` in a window of 16,000 tokens, which it
  crosses every few rounds: pruning and summarizing included (the summary request
  is the mock's; its CPU on the client side counts). Its history stays small, so
  each request is cheaper to build than the ``off`` run's growing one.

Figures: CPU per round of each side, and ``between/off`` and ``compacting/off``
ratios (min and median over the repeats).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.kernel import Runtime
from actors.models import RetryPolicy, open_gateway
from actors.models.config import endpoint
from actors.session.actor import SessionActor
from actors.session.compaction import TRANSCRIPT_MARKER
from actors.session.profiles import anthropic_profile
from bench.mock_provider import start_scripted
from bench.report import Figure, compare, emit, parse_args, ratios, sample_figures
from environments.local import LocalEnvironment
from protocol.session import CompactionMode, SessionConfig, Submit, WaitIdle

SMALL_WINDOW = 16_000
LARGE_WINDOW = 10_000_000


def script(rounds: int, window: int | None) -> dict[str, object]:
    found: dict[str, object] = {
        "rounds": rounds,
        "rounds_tool": "read_file",
        "rounds_arguments": {"file_path": "big.txt"},
        "conversations": [{"match": TRANSCRIPT_MARKER, "turns": [{"text": "Summary: reads."}]}],
    }
    if window is not None:
        found["context_window"] = window
    return found


async def session_cpu(url: str, workdir: Path, mode: CompactionMode, window: int) -> float:
    """Client CPU seconds of one session doing every round the mock asks for."""
    async with Runtime() as runtime:
        ep = endpoint("anthropic", url, "bench-key")
        async with open_gateway(runtime, ep, RetryPolicy(max_retries=0)) as gateway:
            env = await runtime.spawn(LocalEnvironment(workdir))
            config = SessionConfig(
                enable_loop_detection=False, policy="permissive", compaction=mode,
                context_window=window,
            )  # fmt: skip
            session = await runtime.spawn(SessionActor(anthropic_profile(), env, gateway, config))
            cpu = time.process_time()
            await session.tell(Submit("read big.txt again and again"))
            await session.ask(WaitIdle(), timeout=None)
            return time.process_time() - cpu


def main() -> None:
    args = parse_args((__doc__ or "").splitlines()[0])
    rounds, repeats = (40, 2) if args.quick else (200, 5)
    workdir = Path(tempfile.mkdtemp(prefix="troupe-bench-compaction-"))
    (workdir / "big.txt").write_text(
        "".join(f"line {i} of the file, a few words\n" for i in range(120))
    )
    open_mock, open_url = start_scripted(script(rounds, None))
    small_mock, small_url = start_scripted(script(rounds, SMALL_WINDOW))
    try:
        samples = compare(
            {
                "off": lambda: trio.run(session_cpu, open_url, workdir, "off", LARGE_WINDOW),
                "between": lambda: trio.run(session_cpu, open_url, workdir, "auto", LARGE_WINDOW),
                "compacting": lambda: trio.run(
                    session_cpu, small_url, workdir, "auto", SMALL_WINDOW
                ),
            },
            repeats,
        )
    finally:
        for child in (open_mock, small_mock):
            child.terminate()
            child.wait()
    figures = [
        Figure("rounds", "tool rounds per run", rounds, ""),
        Figure("repeats", "interleaved repeats", repeats, ""),
    ]
    for name, label in (
        ("off", "compaction off"),
        ("between", "auto, never reaching the threshold"),
        ("compacting", f"auto, {SMALL_WINDOW:,}-token window"),
    ):
        per_round = [value / rounds * 1000 for value in samples[name].values]
        figures.append(
            Figure(f"{name}_ms_per_round", f"{label}: CPU per round", min(per_round), "ms")
        )
    between = ratios(samples["between"], samples["off"])
    figures += sample_figures("between_over_off", "between / off CPU", between, "x")
    figures[-1] = Figure(
        figures[-1].key, figures[-1].label, figures[-1].value, "x",
        target="no measurable cost (~1.0)", met=between.median < 1.1,
    )  # fmt: skip
    compacting = ratios(samples["compacting"], samples["off"])
    figures += sample_figures("compacting_over_off", "compacting / off CPU", compacting, "x")
    emit("Compaction: client CPU per round, on versus off", figures, args.json)


if __name__ == "__main__":
    main()
