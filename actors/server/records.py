"""What the server knows of each session, live or stored."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
import trio

from actors.kernel import ActorRef, Rejection
from actors.session.approvals import Approvals
from actors.session.events import EventHub
from actors.session.resumed_round import ResumedRound
from actors.store.db import SessionRow
from protocol.session import SessionConfig, Spend
from protocol.wire import SessionInfo

if TYPE_CHECKING:  # the session stack is imported when the first actor starts
    from actors.session.actor import SessionActor


class SessionNotFound(Rejection):
    code = "not_found"


class Record(msgspec.Struct, dict=True):
    """What the registry knows of one session, live or stored (a mutable msgspec
    Struct, not a dataclass: making a dataclass at import costs several million
    instructions of every start, issue 36; ``dict=True`` keeps it open to further
    attributes, as a dataclass was)."""

    row: SessionRow
    config: SessionConfig
    last_seq: int = 0
    """The highest seq issued, durable or live-only."""
    state: str = "idle"
    interrupted: bool = False
    loop_state: str | None = None
    actor: SessionActor | None = None
    ref: ActorRef | None = None
    approvals: Approvals | None = None
    start_lock: trio.Lock | None = None
    """Made on first use (:attr:`starting`): most sessions a fleet starts never
    need one, and a lock is a few hundred bytes and a few microseconds each."""
    task: str = ""
    activity: str = ""
    iterations: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    """List-price USD of the model calls counted above; None once one had no price."""
    spend: Spend | None = None
    """The cost ledger (subagents and compactions included) as of the last input."""
    resumed: ResumedRound | None = None
    """A tool round to carry on when the actor starts (an approval was open at a crash)."""
    seq_mark: int = 0
    """The high-water mark reserved in the store (see :meth:`Store.reserve_seqs`)."""
    updated: float = 0.0
    """When the session last changed (its last durable event or state change)."""
    forked_from: str | None = None
    """A fork's origin, ``SESSION@SEQ`` (see :mod:`actors.server.fork_origin`)."""
    hub: EventHub | None = None
    """A new session announced but not started yet (its actor starts on its first
    input, subscription or request: :meth:`SessionRegistry.live`): its event hub,
    which the actor takes over. None once the actor runs, and for stored sessions."""

    def __post_init__(self) -> None:
        self.updated = max(self.updated, self.row.updated)

    @property
    def starting(self) -> trio.Lock:
        """Held while the session's actor starts (one start at a time)."""
        if self.start_lock is None:
            self.start_lock = trio.Lock()
        return self.start_lock

    @property
    def runs_here(self) -> bool:
        """This process runs the session (live, waiting for its first request, or
        its actor starting): it numbers the session's events, not the store."""
        starting = self.start_lock is not None and self.start_lock.locked()
        return self.live or self.unstarted or starting

    @property
    def live(self) -> bool:
        return self.ref is not None and self.ref.alive

    @property
    def unstarted(self) -> bool:
        """New here and not started yet: as good as live (this server runs it; its
        actor starts on demand), but with no actor to ask."""
        return self.hub is not None and self.ref is None

    def info(self) -> SessionInfo:
        running = self.live or self.unstarted
        status = "closed" if self.state == "closed" else ("live" if running else "stored")
        return SessionInfo(
            session_id=self.row.id,
            address=f"/sessions/{self.row.id}",
            profile=self.row.profile,
            model=self.config.model or self.row.model,
            environment=self.row.environment,
            state=self.state,
            status=status,
            last_seq=self.last_seq,
            created=self.row.created,
            updated=self.updated,
            interrupted=self.interrupted,
            loop_state=self.loop_state,
            config=self.config,
            task=self.task,
            activity=self.activity if self.live else "",
            iterations=self.iterations,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            working_dir=self.row.working_dir,
            cost_usd=self.cost_usd,
            spend=self.spend,
            forked_from=self.forked_from,
        )


class SubagentRecord(msgspec.Struct, dict=True):
    """A subagent whose events the store keeps: live while its actor runs, replayed
    from the store after (it is not started again; its parent spawns new ones)."""

    id: str
    """Its session id (``s-3f2a.a-1``), under which its events are stored."""
    parent: str
    """The top-level session it belongs to."""
    address: str
    last_seq: int = 0
    """The highest seq issued, durable or live-only."""
    seq_mark: int = 0
    """The high-water mark reserved in the store (see :meth:`Store.reserve_seqs`)."""
