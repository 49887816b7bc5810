"""Is each environment reachable? The probe behind ``list_environments`` with
``check``: ask the environment to describe itself and to find its own working
directory. For an SSH host the second question crosses the network every time
(the description is cached), so a host that went away answers ``unreachable``
with the reason, within a few seconds, instead of looking fine until a session
fails on it.
"""

from __future__ import annotations

import msgspec
import trio

from actors.kernel import ActorRef
from protocol.environment import Describe, EnvironmentInfo, FileExists
from protocol.wire import EnvironmentSummary

PROBE_SECONDS = 5.0


async def probe(ref: ActorRef, summary: EnvironmentSummary) -> EnvironmentSummary:
    """``summary`` with the probe's answer: reachable (and where), or why not."""
    error = f"no answer within {PROBE_SECONDS:g} s"
    with trio.move_on_after(PROBE_SECONDS):
        try:
            info: EnvironmentInfo = await ref.ask(Describe(), timeout=PROBE_SECONDS)
            if not await ref.ask(FileExists(info.working_directory), timeout=PROBE_SECONDS):
                raise FileNotFoundError(f"{info.working_directory} is gone")
        except Exception as failure:  # any refusal means "not usable now"; say why
            error = str(failure) or type(failure).__name__
        else:
            return msgspec.structs.replace(
                summary,
                state="reachable",
                working_directory=info.working_directory,
                platform=f"{info.platform} {info.os_version}".strip(),
            )
    return msgspec.structs.replace(summary, state="unreachable", error=error[:500])


async def probe_all(
    refs: list[tuple[ActorRef, EnvironmentSummary]],
) -> list[EnvironmentSummary]:
    """Every environment probed at once; the answers keep the given order."""
    answers: list[EnvironmentSummary] = [summary for _, summary in refs]

    async def one(index: int, ref: ActorRef, summary: EnvironmentSummary) -> None:
        answers[index] = await probe(ref, summary)

    async with trio.open_nursery() as nursery:
        for index, (ref, summary) in enumerate(refs):
            nursery.start_soon(one, index, ref, summary)
    return answers
