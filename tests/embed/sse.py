"""Reading Server-Sent Events with httpx, as a browser's EventSource would."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(frozen=True)
class SSE:
    id: int
    kind: str
    data: dict[str, Any]


async def read_events(response: httpx.Response) -> AsyncIterator[SSE]:
    """The events of a ``text/event-stream`` response, as they arrive."""
    fields: dict[str, str] = {}
    async for line in response.aiter_lines():
        if line:
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
            continue
        if "data" in fields:
            yield SSE(int(fields.get("id", "0")), fields.get("event", "message"),
                      json.loads(fields["data"]))  # fmt: skip
        fields = {}


class EventReader:
    """One response's events, read across several waits."""

    def __init__(self, response: httpx.Response) -> None:
        self._events = read_events(response)

    async def until(self, *kinds: str) -> list[SSE]:
        """Events up to and including the first of ``kinds``."""
        seen: list[SSE] = []
        async for event in self._events:
            seen.append(event)
            if event.kind in kinds:
                return seen
        raise AssertionError(f"stream ended before {kinds}: {[e.kind for e in seen]}")


async def events_until(response: httpx.Response, *kinds: str) -> list[SSE]:
    return await EventReader(response).until(*kinds)
