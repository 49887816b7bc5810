"""``troupe smoke``: the core specification's integration smoke test (§9.13)
against real providers, to check a setup or a release.

For each provider (``--provider``, else every one whose key is set) one session
runs the seven steps in a temporary directory, in an embedded runtime with its
own temporary store; a table says pass or fail with the evidence, then the tokens
used and their cost at the model catalog's list prices. Exit 0 when every step
passed, 1 otherwise, 2 when no provider is usable.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

import msgspec
import trio

from actors.commands.errors import EXIT_BAD_INPUT, EXIT_ERROR, EXIT_OK, CommandError
from actors.commands.render_calls import dollars
from actors.commands.session_host import embedded_server, model_settings
from actors.commands.settings_flags import settings_for
from actors.commands.smoke_steps import STEPS, Step, StepRun
from actors.config import Settings
from actors.config.resolve import DEFAULT_WIRE, KEY_VARIABLES, PROVIDERS, WIRES
from actors.server.server import ServerConfig
from protocol.client import TroupeClient, connect
from protocol.session import SessionConfig
from protocol.wire import (
    CreateSession,
    GetSession,
    InterruptSession,
    SessionCreated,
    SessionDetail,
    SteerSession,
    SubmitInput,
    SubscribeSession,
)


def run(args: argparse.Namespace) -> int:
    chosen = _providers(args)
    return trio.run(_smoke, args, chosen)


def _providers(args: argparse.Namespace) -> list[tuple[str, Settings]]:
    names = PROVIDERS if args.provider in (None, "all") else (args.provider,)
    chosen = []
    for name in names:
        settings = settings_for(argparse.Namespace(**{**vars(args), "provider": name}), Path.cwd())
        usable = settings.api_key.value or settings.get("base_url")
        if usable:
            chosen.append((name, settings))
        elif args.provider not in (None, "all"):
            variables = " or ".join(KEY_VARIABLES[WIRES[DEFAULT_WIRE[name]]])
            raise CommandError(f"no key for {name}: set {variables}", EXIT_BAD_INPUT)
    if not chosen:
        raise CommandError(
            "no provider key is set: set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY "
            "(or give --base-url, e.g. a troupe mock-llm URL)",
            EXIT_BAD_INPUT,
        )
    return chosen


async def _smoke(args: argparse.Namespace, chosen: list[tuple[str, Settings]]) -> int:
    failures = 0
    print(f"{'PROVIDER':<10} {'STEP':<17} {'RESULT':<6} {'TIME':>6}  EVIDENCE", flush=True)
    for name, settings in chosen:
        results, usage, cost = await _one_provider(name, settings, args)
        failures += sum(not ok for ok in results)
        priced = dollars(cost) if cost is not None else "not known (the catalog has no price)"
        print(
            f"{name}: {sum(results)}/{len(results)} passed; tokens in {usage[0]}, out "
            f"{usage[1]}; cost: {priced}",
            flush=True,
        )
    return EXIT_OK if failures == 0 else EXIT_ERROR


async def _one_provider(
    name: str, settings: Settings, args: argparse.Namespace
) -> tuple[list[bool], tuple[int, int], float | None]:
    """The steps' results, the tokens used (in, out), and their cost at list
    prices (None when a model call's price is not in the catalog)."""
    with tempfile.TemporaryDirectory(prefix=f"troupe-smoke-{name}-") as directory:
        root = Path(directory)
        workdir = root / "work"
        workdir.mkdir()
        config = ServerConfig(
            data_dir=root / "data",
            port=0,
            working_dir=workdir,
            models=model_settings(settings),
            advertise=False,
        )
        async with embedded_server(config) as (url, token), connect(url, token) as client:
            created = cast(
                SessionCreated,
                await client.request(
                    CreateSession,
                    profile=name,
                    working_dir=str(workdir),
                    config=SessionConfig(model=settings.get("model")),
                ),
            )
            session = created.session.session_id
            await client.request(SubscribeSession, session=session)
            results = []
            tokens = [0, 0]
            cost: float | None = 0.0
            for number, step in enumerate(STEPS, 1):
                started = time.monotonic()
                found = await _step(client, session, step, workdir, args.step_timeout)
                ok, evidence = step.check(found)
                for data in found.data("assistant_text_end"):
                    usage = data.get("usage") or {}
                    tokens[0] += int(usage.get("input_tokens") or 0)
                    tokens[1] += int(usage.get("output_tokens") or 0)
                    priced = data.get("cost_usd")
                    cost = None if cost is None or priced is None else cost + float(priced)
                mark = "pass" if ok else "FAIL"
                seconds = time.monotonic() - started
                print(
                    f"{name:<10} {number} {step.name:<15} {mark:<6} {seconds:5.1f}s  {evidence}",
                    flush=True,
                )
                results.append(ok)
    return results, (tokens[0], tokens[1]), cost


async def _step(
    client: TroupeClient, session: str, step: Step, workdir: Path, timeout: float
) -> StepRun:
    """Submit the step's prompt (and its steering) and collect its events."""
    found = StepRun(workdir)
    if step.prepare is not None:
        step.prepare(workdir)
    await client.request(SubmitInput, session=session, text=step.prompt)
    if step.steer:
        await client.request(SteerSession, session=session, text=step.steer)
    with trio.move_on_after(timeout) as scope:
        await _collect(client, found)
    if scope.cancelled_caught:
        print(f"troupe smoke: step {step.name!r} took over {timeout:g} s", file=sys.stderr)
        await client.request(InterruptSession, session=session, immediate=True)
        await _collect(client, found)
    detail = cast(SessionDetail, await client.request(GetSession, session=session))
    found.history = msgspec.json.encode(detail.history).decode()
    return found


async def _collect(client: TroupeClient, found: StepRun) -> None:
    async for event in client.events():
        found.events.append(event)
        if event.kind in ("processing_end", "session_end"):
            return
    raise CommandError("lost the connection to the embedded runtime", EXIT_ERROR)
