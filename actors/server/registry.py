"""The server's sessions: creating them, starting stored ones again, and keeping
the store up to date.

Each SessionActor gets the store as an event sink before it starts, so its very
first event is durable. The registry also watches the events (state changes, new
history) and saves the conversation's turns as they are added, asking the session
for a snapshot; on resume the session starts from that history and numbers its
events on from the last stored one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import msgspec
import trio

from actors.kernel import ActorError, ActorRef, Rejection, Runtime, UnknownAddressError
from actors.server.approvals import Approvals
from actors.server.environments import Environments
from actors.server.models import Models
from actors.server.recovery import recover_session, repair_history
from actors.session.actor import SessionActor
from actors.store import Store
from actors.store.db import SessionRow
from protocol.session import GetSnapshot, SessionConfig, SessionEvent, Turn
from protocol.wire import SessionInfo

_HISTORY_KINDS = frozenset(
    {"user_input", "assistant_text_start", "assistant_text_end", "steering_injected",
     "loop_detection", "processing_end", "session_end", "turn_limit"}
)  # fmt: skip
_config = msgspec.json.Decoder(SessionConfig)


class SessionNotFound(Rejection):
    code = "not_found"


@dataclass
class Record:
    """What the registry knows of one session, live or stored."""

    row: SessionRow
    config: SessionConfig
    last_seq: int = 0
    state: str = "idle"
    interrupted: bool = False
    actor: SessionActor | None = None
    ref: ActorRef | None = None
    history_saved: int = 0
    history_wanted: trio.Event = field(default_factory=trio.Event)
    approvals: Approvals | None = None
    starting: trio.Lock = field(default_factory=trio.Lock)

    @property
    def live(self) -> bool:
        return self.ref is not None and self.ref.alive

    def info(self) -> SessionInfo:
        status = "closed" if self.state == "closed" else ("live" if self.live else "stored")
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
            updated=time.time() if self.live else self.row.updated,
            interrupted=self.interrupted,
            config=self.config,
        )


class SessionRegistry:
    """Creates, finds and resumes sessions; one per server."""

    def __init__(
        self,
        runtime: Runtime,
        store: Store,
        environments: Environments,
        models: Models,
        nursery: trio.Nursery,
    ) -> None:
        self.runtime = runtime
        self.store = store
        self.environments = environments
        self.models = models
        self._nursery = nursery
        self.records: dict[str, Record] = {}
        self.frozen = False

    def freeze(self) -> None:
        """Stop recording: the server is going down and its sessions will resume."""
        self.frozen = True

    async def recover(self) -> None:
        """Load every stored session, closing what a crash left open."""
        seqs = await self.store.last_seqs()
        for row in await self.store.sessions():
            last_seq, interrupted = await recover_session(self.store, row, seqs.get(row.id, 0))
            state = "closed" if row.state == "closed" else "idle"
            record = Record(row, _config.decode(row.config), last_seq, state)
            record.interrupted = interrupted or row.interrupted
            record.history_saved = len(await self.store.history(row.id))
            self.records[row.id] = record

    # -- lookup --------------------------------------------------------------

    def record(self, session: str) -> Record:
        """By id (``s-3f2a``) or top-level address (``/sessions/s-3f2a``)."""
        key = session.removeprefix("/sessions/").strip("/")
        record = self.records.get(key)
        if record is None:
            raise SessionNotFound(f"no session {session}")
        return record

    def infos(self) -> list[SessionInfo]:
        return [record.info() for record in self.records.values()]

    def ref_for(self, session: str) -> ActorRef:
        """Any session's actor, subagents included (by address)."""
        if session.startswith("/") and session.strip("/").count("/") > 1:
            try:
                return self.runtime.ref(session)
            except UnknownAddressError:
                raise SessionNotFound(f"no session at {session}") from None
        return self.record(session).ref or self.runtime.ref(f"/sessions/{session}")

    # -- creating and starting -----------------------------------------------

    async def create(
        self,
        profile_name: str | None,
        environment: str | None,
        working_dir: str | None,
        config: SessionConfig | None,
    ) -> Record:
        profile = self.models.profile(profile_name)
        config = config or SessionConfig()
        if environment:
            env = self.environments.resolve(environment)
        else:
            env = await self.environments.local(working_dir)
        gateway = await self.models.routes(profile)
        actor = SessionActor(profile, env, gateway, config)
        now = time.time()
        row = SessionRow(
            actor.id, profile.id, config.model or profile.model, env.address,
            working_dir, msgspec.json.encode(config), "idle", False, now, now,
        )  # fmt: skip
        self.store.put_session(
            row.id, row.profile, row.model, row.environment, working_dir, config, created=now
        )
        record = Record(row, config)
        self.records[row.id] = record
        await self._spawn(record, actor)
        return record

    async def live(self, session: str) -> Record:
        """The session's record with its actor running (a stored session is resumed)."""
        record = self.record(session)
        async with record.starting:
            if record.live or record.state == "closed":
                return record
            row = record.row
            profile = self.models.profile(row.profile)
            if row.environment.startswith("/environments/local"):
                env = await self.environments.local(row.working_dir)
            else:
                env = self.environments.resolve(row.environment)
            gateway = await self.models.routes(profile)
            history = await self.store.history(row.id)
            repaired = repair_history(history)
            if repaired:
                self.store.put_history(row.id, len(history), repaired)
                history += repaired
            record.history_saved = len(history)
            actor = SessionActor(
                profile, env, gateway, record.config, row.id, history, record.last_seq + 1
            )
            await self._spawn(record, actor)
        return record

    async def _spawn(self, record: Record, actor: SessionActor) -> None:
        record.actor = actor
        record.approvals = Approvals(actor.hub.emit)
        actor.hub.add_sink(lambda event: self._observe(record, event))
        record.ref = await self.runtime.spawn(actor, name=f"sessions/{record.row.id}")
        self._nursery.start_soon(self._save_history, record, record.ref)

    # -- keeping the store up to date ----------------------------------------

    def _observe(self, record: Record, event: SessionEvent) -> None:
        """A hub sink: quick, never raises (it runs inside the session's emit)."""
        if self.frozen:
            return
        self.store.append_event(event)
        if event.seq > record.last_seq:
            record.last_seq = event.seq
        state = None
        if event.kind == "user_input":
            state = "processing"
        elif event.kind == "processing_end":
            state = str(event.data.get("state", "idle"))
        elif event.kind == "session_end":
            state = "closed"
        if state is not None and state != record.state:
            record.state = state
            record.interrupted = False
            self.store.put_state(record.row.id, state)
        if event.kind in _HISTORY_KINDS:
            record.history_wanted.set()

    async def _save_history(self, record: Record, ref: ActorRef) -> None:
        """Store new turns whenever events say the history grew, until the actor stops."""
        while ref.alive:
            await record.history_wanted.wait()
            record.history_wanted = trio.Event()
            try:
                snapshot = await ref.ask(GetSnapshot(), timeout=30)
            except ActorError:
                return
            self._store_turns(record, snapshot.history)
            if record.state == "closed":
                return

    def _store_turns(self, record: Record, history: list[Turn]) -> None:
        new = history[record.history_saved :]
        if new:
            self.store.put_history(record.row.id, record.history_saved, new)
            record.history_saved = len(history)

    def pending_approvals(self, session: str) -> list[SessionEvent]:
        record = self.record(session)
        return record.approvals.events() if record.approvals else []
