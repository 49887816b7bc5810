"""The server's sessions: creating them, finding them, and starting stored ones again.

Each SessionActor gets the store as an event sink and a turn sink before it
starts (see :mod:`actors.server.store_sync`), so its very first event and turn are
durable; on resume
the session starts from its stored history and numbers its events on from the
last stored one.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

import msgspec
import trio

from actors.kernel import ActorRef, Rejection, Runtime, UnknownAddressError
from actors.server.environments import Environments
from actors.server.fork_origin import fork_origin, stored_fork_origin
from actors.server.models import Models
from actors.server.records import Record, SessionNotFound, SubagentRecord
from actors.server.store_sync import StoreSync
from actors.server.summaries import apply_summary, summary_from_events
from actors.session.events import KEEP_BYTES, EventHub
from actors.session.lifecycle import new_session_id, start_event
from actors.session.profiles import ProviderProfile
from actors.session.snapshots import SnapshotCache
from actors.store import Store
from actors.store.db import SessionRow, SummaryRow
from protocol.events import ForkedFromEvent, SessionEndEvent, SessionEvent
from protocol.session import SessionConfig, Turn
from protocol.wire import SessionInfo
from protocol.wire_client_calls import ClientOperation

if TYPE_CHECKING:
    from actors.server.fleet import Fleet
    from actors.session.actor import SessionActor

STOP_WAIT = 30.0
"""Seconds a claim waits for this node's old actor of the session to stop."""
log = logging.getLogger("troupe.server")


def _session_actor() -> type[SessionActor]:
    """The session's actor, imported when the first one starts: with it come the
    agentic loop, the tools and the model layer (httpx), which a server does not
    need before it is ready (issue #36)."""
    from actors.session.actor import SessionActor

    return SessionActor


def _decode_config(blob: bytes) -> SessionConfig:
    """A stored session's config. Not a module-level Decoder: making one resolves
    the config's types at import, and a run that reads no stored session does not
    need them (issue 36); msgspec keeps a Struct's type info once made."""
    return msgspec.json.decode(blob, type=SessionConfig)


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
        self.subagents: dict[str, SubagentRecord] = {}
        """Every subagent the store holds events of, live or not, by address."""
        self._subagent_ids: dict[str, SubagentRecord] = {}
        self.sync = StoreSync(store)
        self.observers: list[Callable[[EventHub], None]] = []
        """Told of every session's and subagent's event hub before it starts (the
        host's telemetry adds its sink there)."""
        self.snapshots = SnapshotCache()
        """Environment snapshots, shared by the sessions on one environment."""
        self.client_environments: dict[str, ActorRef] = {}
        """Sessions whose file operations a client serves (see ``create``)."""
        self.replay_buffer_bytes = KEEP_BYTES
        """What each live session keeps of its recent durable events, in bytes."""
        self._subagents_read: set[str] = set()
        """Sessions whose stored subagents are in :attr:`subagents` (see :meth:`load`)."""
        self.recovered: list[str] = []
        """The sessions and subagents the last :meth:`recover` visited (were live)."""
        self.fenced_paths: tuple[str, ...] = ()
        """Troupe's own directories as this host has them (:func:`own_paths`), denied
        to every session it creates."""
        self._claims: dict[str, trio.Lock] = {}
        self.start_on_demand = False
        """A new session's actor starts with its first input, subscription or request
        (:meth:`_announce`; ``troupe serve``). Off, it starts with the session (an
        embedding program reaches the actor at ``/sessions/ID`` as soon as it exists)."""
        self.fleet: Fleet | None = None
        """On a fleet (PostgreSQL): a session's actor runs here only while this
        node holds its lease (:mod:`actors.server.fleet`)."""
        self.local_shadow_base: str | None = None
        """Where sessions on this machine keep their working-tree snapshots (the data
        directory's ``shadow/``, fenced off like the rest of it); sessions elsewhere
        keep them on their own host (docs/snapshots.md)."""

    async def recover(self) -> None:
        """Close what a crash left open, in the sessions that were live.

        Only those are read: their stored state says so (``processing``: an input
        was running; written before the input's first event, so a stored input is
        never behind an ``idle`` row), found through the state's index. A session
        at rest is read when it is first named (:meth:`load`) or listed
        (:meth:`refresh`), so a start costs the same with ten or ten thousand old
        sessions (:attr:`recovered` names the visited ones)."""
        self.recovered = []
        if self.fleet is not None:  # the fleet takes over what no node holds
            return
        for row in await self.store.sessions_not_at_rest():
            record = await self._recovered(row)
            if record.resumed is not None:  # back awaiting its approval, with or without a client
                self._nursery.start_soon(self._resume_round, row.id)

    async def _recovered(self, row: SessionRow) -> Record:
        """The record of a stored session, with what a crash left open closed."""
        from actors.server.recovery import recover_stored_session  # only with sessions to recover

        self.recovered.append(row.id)
        mark = await self.store.seq_mark(row.id)
        issued = max(mark, await self.store.max_seq(row.id))
        last_seq, interrupted, resumed = await recover_stored_session(self.store, row, issued)
        state = "processing" if resumed is not None else "idle"
        state = "closed" if row.state == "closed" else state
        record = Record(row, _decode_config(row.config), last_seq, state=state)
        record.seq_mark = mark
        record.interrupted = interrupted or row.interrupted
        record.resumed = resumed
        await self._load_summary(record, await self.store.summary(row.id))
        record.spend = await self.store.ledger(row.id)
        record.forked_from = await stored_fork_origin(self.store, row.id)
        await self._recover_subagents(row.id)
        self.records[row.id] = record  # published whole
        return record

    async def claim(self, session_id: str) -> Record:
        """On a fleet: own the session (its lease; :class:`OwnedElsewhere` if
        another node does) and read it fresh from the store, closing what its
        last owner left open, as a restart does (the running input interrupted,
        an approval it waited for asked again)."""
        assert self.fleet is not None
        fleet = self.fleet
        with fleet.pin(session_id):
            await fleet.acquire(session_id)
            row = await self.store.session(session_id)
            if row is None:
                await fleet.release(session_id)
                raise SessionNotFound(f"no session {session_id}")
            old = self.records.get(session_id)
            if old is not None and old.live:
                return old  # running here already (claimed by another task)
            return await self._recovered(row)

    async def take_over(self, session_id: str) -> None:
        """A session whose owner stopped renewing: claimed, recovered, and resumed
        here if its tool round waits for an approval; else given back at rest."""
        assert self.fleet is not None
        with self.fleet.pin(session_id):
            async with self._claim_lock(session_id):
                existing = self.records.get(session_id)
                if existing is not None and existing.live:
                    return
                record = await self.claim(session_id)
                if record.row.state not in ("idle", "closed"):  # else another node was first
                    log.warning("session %s taken over by this node", session_id)
                if record.resumed is not None:  # back awaiting its approval
                    await self._address_free(session_id)
                    try:
                        await self._start(record)
                    except Rejection as exc:  # no model key or host now: a subscriber retries
                        log.warning("session %s cannot resume its round yet: %s", session_id, exc)
                    return
        if not record.live:
            await self.store.flush()
            await self.fleet.release(session_id)

    async def load(self, session: str) -> None:
        """Make a stored session known by its id or address (a subagent's address
        names its session), reading its row, summary and subagents; nothing when
        it is known already or the store has no such session. A session at rest
        needs no recovery; one another process is running (an embedded ``troupe
        run``) is listed as stored, never resumed here while it runs there."""
        key = session.strip("/").removeprefix("sessions/").split("/")[0]
        if not key:
            return
        if key not in self.records:
            row = await self.store.session(key)
            if row is None:
                return
            if key not in self.records:  # nobody added it while the store answered
                mark = await self.store.seq_mark(key)
                issued = mark or await self.store.max_seq(key)
                record = Record(row, _decode_config(row.config), issued, state=row.state)
                record.seq_mark = mark
                record.interrupted = row.interrupted
                await self._load_summary(record, await self.store.summary(key))
                record.spend = await self.store.ledger(key)
                record.forked_from = await stored_fork_origin(self.store, key)
                # Published only if still nobody's: a claim (a fleet's take-over) may
                # have published its record, and started its actor, while the store
                # answered; replacing that would leave the actor running under no
                # record, and the next request would start a second one.
                self.records.setdefault(key, record)
        await self._load_subagents(key)

    async def _load_subagents(self, session_id: str) -> None:
        """The stored subagents of a session at rest (their events are replayed by
        address; a resumed session numbers new ones above them)."""
        if session_id in self._subagents_read:
            return
        self._subagents_read.add(session_id)
        for sub in await self.store.subagents_of(session_id):
            if sub.id not in self._subagent_ids:
                mark = await self.store.seq_mark(sub.id)
                issued = mark or await self.store.max_seq(sub.id)
                self._add_subagent(SubagentRecord(sub.id, sub.parent, sub.address, issued, issued))

    async def _load_summary(self, record: Record, summary: SummaryRow | None) -> None:
        """The list's view of a stored session: its stored summary, or (a store
        from before summaries were kept) one counted from its events, once."""
        if summary is None:
            summary = await summary_from_events(self.store, record)
            self.store.put_summary(summary)
        apply_summary(record, summary)

    async def refresh(self) -> None:
        """Take in what another process sharing the store did: sessions an embedded
        ``troupe run`` created (listed, never resumed here while they run there),
        and the summaries of sessions not running in this server."""
        summaries = await self.store.summaries()
        ledgers = await self.store.ledgers()
        marks = await self.store.seq_marks()
        for row in await self.store.sessions():
            record = self.records.get(row.id)
            if record is None:
                record = Record(row, _decode_config(row.config), state=row.state)
                record.interrupted = row.interrupted
                self.records[row.id] = record
            elif record.runs_here:
                continue  # running here: this process numbers its events
            else:
                record.row = row
                record.state = row.state
                record.updated = max(record.updated, row.updated)
            # numbers another process reserved are taken: a resume here goes on after them
            mark = marks.get(row.id, 0)
            record.seq_mark = max(record.seq_mark, mark)
            record.last_seq = max(record.last_seq, mark)
            summary = summaries.get(row.id)
            if summary is not None:
                apply_summary(record, summary)
            record.spend = ledgers.get(row.id, record.spend)

    async def _resume_round(self, session: str) -> None:
        try:
            await self.live(session)
        except Rejection as exc:  # no model key or SSH host now: a subscriber retries
            log.warning("session %s cannot resume its tool round yet: %s", session, exc)

    async def _recover_subagents(self, parent: str) -> None:
        """A subagent is not started again; what a crash left open in it is closed
        (its input interrupted) so that its stored stream ends consistently."""
        from actors.server.recovery import close_open_input

        self._subagents_read.add(parent)
        for row in await self.store.subagents_of(parent):
            self.recovered.append(row.id)
            issued = max(await self.store.seq_mark(row.id), await self.store.max_seq(row.id))
            closed = await close_open_input(self.store, row.id, issued)
            self._add_subagent(SubagentRecord(row.id, row.parent, row.address, closed.seq, issued))
        await self.store.flush()

    def _add_subagent(self, record: SubagentRecord) -> None:
        self.subagents[record.address] = record
        self._subagent_ids[record.id] = record

    # -- lookup --------------------------------------------------------------

    def record(self, session: str) -> Record:
        """By id (``s-3f2a``) or top-level address (``/sessions/s-3f2a``)."""
        key = session.removeprefix("/sessions/").strip("/")
        record = self.records.get(key)
        if record is None:
            raise SessionNotFound(f"no session {session}")
        return record

    def subagent(self, address: str) -> SubagentRecord | None:
        """A stored subagent by its canonical address, if the store holds it."""
        return self.subagents.get("/" + address.strip("/"))

    def issued_seq(self, session_id: str) -> int | None:
        """The highest seq a session or subagent has issued; None if unknown."""
        record = self.records.get(session_id)
        if record is not None:
            return record.last_seq
        subagent = self._subagent_ids.get(session_id)
        return None if subagent is None else subagent.last_seq

    def infos(self) -> list[SessionInfo]:
        """Every session, the one changed last first."""
        infos = [record.info() for record in self.records.values()]
        return sorted(infos, key=lambda info: info.updated, reverse=True)

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
        client: tuple[ActorRef, frozenset[ClientOperation]] | None = None,
        history: list[Turn] | None = None,
        origin: ForkedFromEvent | None = None,
    ) -> Record:
        """``client``: a connection and the operations it serves for this session
        (the session's environment is then a :class:`ClientEnvironment`; the store
        records the environment behind it, which a resumed session uses).
        ``history`` and ``origin``: a fork's conversation so far, and where it
        comes from (its first event after ``session_start``)."""
        profile = self.models.profile(profile_name)
        config = self.models.settings.session_config(config, profile.id)
        if environment:
            env = self.environments.resolve(environment)
        else:
            env = await self.environments.local(working_dir)
        gateway = await self.models.routes(profile)
        if self.start_on_demand and client is None and not history and origin is None:
            return await self._announce(profile, config, env, working_dir)
        served, session_env = None, env
        if client is not None:  # a client serving operations (an editor): rare, imported then
            from actors.server.client_environment import ClientEnvironment

            served = ClientEnvironment(env, *client)
            number = len(self.client_environments) + 1
            session_env = await self.runtime.spawn(served, name=f"client-environments/{number}")
        actor = _session_actor()(
            profile, session_env, gateway, config, history=history, snapshots=self.snapshots
        )
        actor.origin = origin
        if served is not None:
            served.session_id = actor.id
            self.client_environments[actor.id] = session_env
            actor.hub.add_sink(lambda event: self._client_session_event(actor.id, event))
        record = self._new_record(actor.id, profile, config, env, working_dir)
        try:
            record.forked_from = fork_origin(origin)
            if history:
                self.store.put_history(record.row.id, 0, history)
            await self._spawn(record, actor)
        finally:
            self._unpin(record.row.id)
        return record

    async def _announce(
        self,
        profile: ProviderProfile,
        config: SessionConfig,
        env: ActorRef,
        working_dir: str | None,
    ) -> Record:
        """A new session with nothing to carry (no history, no client serving it):
        stored and announced (its ``session_start``, through its own hub) as its
        actor's start would, but the actor starts only with the session's first
        input, subscription or request (:meth:`live`). Most sessions a fleet starts
        wait a long while for their first input; an actor costs a task, a mailbox
        and a few kilobytes each meanwhile."""
        root = await self.snapshots.working_directory(env)  # what the actor's start asks
        record = self._new_record(new_session_id(), profile, config, env, working_dir)
        try:  # no wait from here on: the session is whole once it is listed
            hub = record.hub = EventHub(record.row.id)
            self._wire(record, hub)
            hub.emit(start_event(profile, config, root))
        finally:
            self._unpin(record.row.id)
        return record

    def _new_record(
        self,
        session_id: str,
        profile: ProviderProfile,
        config: SessionConfig,
        env: ActorRef,
        working_dir: str | None,
    ) -> Record:
        """A new session's record and stored row (and lease, on a fleet: pinned
        until the caller's :meth:`_unpin`, then held as long as the session runs
        here)."""
        if self.fleet is not None:
            self.fleet.adopt(session_id)  # epoch 1: its first write is fenced
            self.fleet.hold(session_id)
            self.store.put_lease(session_id)  # written with its first rows, before them
        now = time.time()
        encoded = msgspec.json.encode(config)
        row = SessionRow(
            session_id, profile.id, config.model or profile.model, env.address,
            working_dir, encoded, "idle", False, now, now,
        )  # fmt: skip
        self.store.put_session(
            row.id, row.profile, row.model, row.environment, working_dir, encoded, created=now
        )
        record = Record(row, config)
        self.records[row.id] = record
        self._subagents_read.add(row.id)  # new: it has none stored
        return record

    def _unpin(self, session_id: str) -> None:
        """The end of a new session's pin (:meth:`_new_record`)."""
        if self.fleet is not None:
            self.fleet.unhold(session_id)

    def _client_session_event(self, session_id: str, event: SessionEvent) -> None:
        """A hub sink: once a client-served session has ended (its environment is no
        longer used), stop the environment in front of its local one."""
        if isinstance(event.data, SessionEndEvent):
            ref = self.client_environments.pop(session_id, None)
            if ref is not None:
                self._nursery.start_soon(self.runtime.stop, ref)

    async def live(self, session: str) -> Record:
        """The session's record with its actor running (a stored session is resumed)."""
        record = self.record(session)
        if self.fleet is not None:
            return await self._live_on_fleet(record.row.id)
        async with record.starting:
            if record.live or record.state == "closed":
                return record
            return await self._start(record)

    async def _live_on_fleet(self, session_id: str) -> Record:
        """On a fleet: claimed first (read fresh, what its last owner left open
        closed) unless this node holds it; one claim or start at a time per session."""
        assert self.fleet is not None
        with self.fleet.pin(session_id):
            async with self._claim_lock(session_id):
                record = self.record(session_id)
                if record.live or record.state == "closed":
                    return record
                if not self.fleet.ownership.holds(session_id):
                    record = await self.claim(session_id)
                    if record.live or record.state == "closed":
                        return record
                    await self._address_free(session_id)
                return await self._start(record)

    async def _address_free(self, session_id: str) -> None:
        """Wait until an actor of the session that lost its lease here has stopped
        (its stop runs on: :meth:`Fleet.lost`): its address is free only then, and
        a claim replaces its record, so the runtime is asked, not the record."""
        try:
            stopping = self.runtime.ref(f"/sessions/{session_id}")
        except UnknownAddressError:
            return
        with trio.move_on_after(STOP_WAIT):
            await stopping.wait_stopped()

    @contextlib.asynccontextmanager
    async def _claim_lock(self, session_id: str) -> AsyncIterator[None]:
        """Claims and starts of one session take turns (a subscriber, a request and
        the take-over loop may all reach for it at once); the lock goes once idle."""
        lock = self._claims.get(session_id)
        if lock is None:
            lock = self._claims[session_id] = trio.Lock()
        try:
            async with lock:
                yield
        finally:
            if not lock.locked() and lock.statistics().tasks_waiting == 0:
                self._claims.pop(session_id, None)

    async def _start(self, record: Record) -> Record:
        """Start a stored session's actor, or an announced one's (its lease held,
        on a fleet)."""
        row = record.row
        profile = self.models.profile(row.profile)
        serving = self.client_environments.get(row.id)
        if serving is not None and serving.address in self.runtime.addresses():
            env = serving
        elif row.environment.startswith("/environments/local"):
            env = await self.environments.local(row.working_dir)
        else:
            env = self.environments.resolve(row.environment)
        gateway = await self.models.routes(profile)
        if record.hub is not None:  # announced here: nothing stored to read back
            actor = _session_actor()(
                profile, env, gateway, record.config, row.id, snapshots=self.snapshots,
                hub=record.hub,
            )  # fmt: skip
            actor.announced = True
            await self._spawn(record, actor)
            record.hub = None
            return record
        await self._load_subagents(row.id)  # new subagents are numbered above them
        history = await self.store.history(row.id)
        resumed, record.resumed = record.resumed, None
        from actors.server.recovery import repair_history

        repaired = [] if resumed is not None else repair_history(history)
        if repaired:
            self.store.put_history(row.id, len(history), repaired)
            history += repaired
        actor = _session_actor()(
            profile, env, gateway, record.config, row.id, history, record.last_seq + 1,
            resumed=resumed, first_agent_number=self._next_agent_number(row.id),
            snapshots=self.snapshots,
        )  # fmt: skip
        if record.spend is not None:  # subagents' spend is not in the history
            actor.loop.cost.carry_over(record.spend)
        await self._spawn(record, actor)
        return record

    async def _spawn(self, record: Record, actor: SessionActor) -> None:
        record.actor = actor
        actor.fenced_paths = self.fenced_paths
        if record.row.environment.startswith("/environments/local"):
            actor.shadow_base = self.local_shadow_base
        record.approvals = actor.approvals
        if actor.hub is not record.hub:  # an announced session's hub is wired already
            self._wire(record, actor.hub)
        actor.loop.history.add_sink(lambda index, turn: self.sync.observe_turn(record, index, turn))

        async def durable() -> None:  # the session's last event, so all it queued before
            await self.store.wait_committed(record.row.id, record.last_seq)

        actor.loop.durable = actor.loop.compactor.durable = durable
        actor.subagent_hook = lambda child, address: self._subagent_started(record, child, address)
        record.ref = await self.runtime.spawn(actor, name=f"sessions/{record.row.id}")

    def _wire(self, record: Record, hub: EventHub) -> None:
        """A session's hub: its events to the store, and to the host's observers."""
        hub.keep_bytes = self.replay_buffer_bytes
        hub.add_sink(lambda event: self.sync.observe(record, event))
        for observe in self.observers:
            observe(hub)

    def _subagent_started(self, parent: Record, child: SessionActor, address: str) -> None:
        """A subagent of ``parent`` (at any depth) is about to start: its events go to
        the store under its own id, numbered as a session's are."""
        subagent = SubagentRecord(child.id, parent.row.id, address)
        self.store.put_subagent(subagent.id, subagent.parent, subagent.address)
        self._add_subagent(subagent)
        child.hub.keep_bytes = self.replay_buffer_bytes
        child.hub.add_sink(lambda event: self.sync.observe_subagent(subagent, event))
        for observe in self.observers:
            observe(child.hub)

    def _next_agent_number(self, session_id: str) -> int:
        """Above every subagent the session has had directly (``s-x.a-N``)."""
        prefix = f"{session_id}.a-"
        numbers = [
            int(rest)
            for subagent_id in self._subagent_ids
            if subagent_id.startswith(prefix) and (rest := subagent_id[len(prefix) :]).isdigit()
        ]
        return max(numbers, default=0) + 1

    def pending_approvals(self, session: str) -> list[SessionEvent]:
        record = self.record(session)
        return record.approvals.events() if record.approvals else []
