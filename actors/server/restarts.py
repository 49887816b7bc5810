"""Supervised restarts, told to the sessions they touch.

The kernel logs every restart; the server also reports it to each live session
whose environment restarted (or sits under the actor that did, such as the SSH
bridge), as a durable ``service_restarted`` event, so a
client watching the session sees why a tool call failed and that the environment
is back.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING

import trio

from actors.kernel import ActorError, ActorRef, Runtime
from actors.session.lifecycle import restarted_event
from protocol.supervision import ChildRestarted, ServiceRestarted

if TYPE_CHECKING:
    from actors.server.registry import SessionRegistry

log = logging.getLogger("troupe.server")


def report_restarts(runtime: Runtime, registry: SessionRegistry, nursery: trio.Nursery) -> None:
    """Watch the runtime's restarts and tell the sessions that use what restarted."""

    def restarted(notice: ChildRestarted) -> None:
        for record in list(registry.records.values()):
            environment = record.row.environment
            affected = environment == notice.address or environment.startswith(notice.address + "/")
            report = ServiceRestarted(
                notice.address, notice.error_type, notice.message, notice.restarts
            )
            if affected and record.live and record.ref is not None:
                nursery.start_soon(_tell, record.ref, report)
            elif affected and record.hub is not None and record.unstarted:
                record.hub.emit(restarted_event(report))  # what its actor would say

    runtime.watch_restarts(restarted)


async def _tell(ref: ActorRef, report: ServiceRestarted) -> None:
    with contextlib.suppress(ActorError):  # the session stopped meanwhile
        await ref.tell(report)
