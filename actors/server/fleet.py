"""A server as one node of a fleet on one PostgreSQL (issue 37).

Each live session is owned by one node, under a fenced lease
(:mod:`actors.store.ownership`). This module runs the node's side of it:

- it renews every lease it holds, in one statement per period, and stops the
  local actor of any session whose lease it lost (another node took it over
  while this one was paused or cut off: its writes were already refused);
- it takes over, as a restart would, the sessions with an input running (or an
  approval open) whose owner stopped renewing: the running input is marked
  interrupted, an open approval is asked again, and the subscribers on every
  node read the new events from the store;
- it hands its sessions over on a graceful drain (SIGTERM): idle sessions at
  once, running ones as their input ends, so no input is interrupted;
- it listens for the store's doorbell (``NOTIFY``): new events of sessions that
  run elsewhere, for the subscriptions this node serves, and requests other
  nodes left in the inbox for the sessions it owns (:mod:`actors.server.inbox`).

A session is owned while its actor runs here: a lease is taken before an actor
starts (a new session, a resumed one, a take-over) and given back once it stops.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import socket
import threading
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import trio

from actors.kernel import Rejection

if TYPE_CHECKING:  # the driver is imported only by a node on PostgreSQL
    from actors.store.leases import LeaseSettings
    from actors.store.ownership import Ownership

log = logging.getLogger("troupe.fleet")

POLL = 1.0
"""Seconds a store subscriber waits for the doorbell before it reads anyway."""
DRAIN_TIMEOUT = 60.0
"""How long a drain waits for running inputs to end before it suspends them."""
TAKE_OVER_EVERY = 1.0
"""The longest wait between two looks for sessions whose lease lapsed."""
LAPSE_MARGIN = 0.05
"""Seconds after another node's heartbeat would lapse that this node looks again."""


DEFAULT_TTL = 10.0
DEFAULT_RENEW = 3.0


class OwnedElsewhere(Rejection):
    """Another node owns the session now (its lease runs)."""

    code = "owned_elsewhere"

    def __init__(self, session_id: str, node_id: str, url: str) -> None:
        super().__init__(f"session {session_id} runs on node {node_id} ({url or 'no url'})")
        self.session_id = session_id
        self.node_id = node_id
        self.url = url


class FleetSettings(msgspec.Struct, frozen=True):
    """A node's settings: its id (empty: :func:`node_id_for`), the lease TTL and
    how often its owner renews (well inside the TTL)."""

    node_id: str = ""
    lease_ttl: float = DEFAULT_TTL
    lease_renew: float = DEFAULT_RENEW


def node_id_for(data_dir: Path) -> str:
    """A stable id for this node: kept in the data directory (``node-id``) the
    first time, so a node restarted on the same data directory is the same node;
    this host's name and process id if the directory cannot take it."""
    path = data_dir / "node-id"
    try:
        found = path.read_text().strip()
        if found:
            return found
    except OSError:
        pass
    made = f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}"
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(".node-id.tmp")
        temporary.write_text(made + "\n")
        os.replace(temporary, path)
    except OSError:
        return f"{socket.gethostname()}-{os.getpid()}"
    return made


class Doorbell:
    """Trio events rung from the listener thread, by session id (``*``: all)."""

    def __init__(self) -> None:
        self._bells: dict[str, trio.Event] = {}

    def ring(self, payload: str) -> None:
        if payload == "*" or not payload:
            bells, self._bells = self._bells, {}
            for bell in bells.values():
                bell.set()
            return
        for key in payload.split(","):
            bell = self._bells.pop(key, None)
            if bell is not None:
                bell.set()

    async def wait(self, key: str, timeout: float = POLL) -> None:
        """Until ``key`` is rung or ``timeout`` passed (a lost ring only delays)."""
        bell = self._bells.get(key)
        if bell is None:
            bell = self._bells[key] = trio.Event()
        with trio.move_on_after(timeout):
            await bell.wait()


class Fleet:
    """This node: its ownership, its loops, its doorbells."""

    def __init__(self, ownership: Ownership, url: str = "") -> None:
        self.ownership = ownership
        self.url = url
        self.events = Doorbell()
        self.inbox = Doorbell()
        self._pins: collections.Counter[str] = collections.Counter()
        """Sessions being claimed or created here: not released meanwhile."""
        self.draining = False
        self.stop_local: Callable[[str], Awaitable[None]] | None = None
        """Stops this node's actor of a session (set by the server)."""
        self.is_live: Callable[[str], bool] = lambda session_id: False
        self.claim: Callable[[str], Awaitable[None]] | None = None
        """Takes a claimable session over (the registry's recovery path)."""
        self.serve_inbox: Callable[[], Awaitable[None]] | None = None
        self._stopping = threading.Event()

    @property
    def node_id(self) -> str:
        return self.ownership.node_id

    @property
    def settings(self) -> LeaseSettings:
        return self.ownership.settings

    # -- holding -------------------------------------------------------------

    @contextlib.contextmanager
    def pin(self, session_id: str) -> Iterator[None]:
        """Keep the session's lease while a claim or a start is under way."""
        self.hold(session_id)
        try:
            yield
        finally:
            self.unhold(session_id)

    def hold(self, session_id: str) -> None:
        """:meth:`pin` without its context manager (a new session: each start
        pays for one); every hold is followed by one :meth:`unhold`."""
        self._pins[session_id] += 1

    def unhold(self, session_id: str) -> None:
        left = self._pins[session_id] - 1
        if left <= 0:
            del self._pins[session_id]
        else:
            self._pins[session_id] = left

    async def acquire(self, session_id: str) -> None:
        """Own ``session_id`` or raise :class:`OwnedElsewhere`."""
        from actors.store.leases import LeaseHeld

        if self.draining:
            raise OwnedElsewhere(session_id, self.node_id + " (draining)", "")
        try:
            await trio.to_thread.run_sync(self.ownership.acquire, session_id)
        except LeaseHeld as held:
            found = await trio.to_thread.run_sync(self.ownership.owner, session_id)
            url = found[1] if found is not None else ""
            raise OwnedElsewhere(session_id, held.owner, url) from None

    def adopt(self, session_id: str) -> None:
        """Own a new session: its lease (epoch 1) is written by the store's writer
        with its first rows, so a start waits for no round trip (the caller queues
        the ``lease`` op before them: :meth:`actors.store.Store.put_lease`)."""
        if self.draining:
            raise OwnedElsewhere(session_id, self.node_id + " (draining)", "")
        self.ownership.adopt(session_id)

    async def release(self, session_id: str) -> None:
        with contextlib.suppress(Exception):  # a fault: the lease lapses by itself
            await trio.to_thread.run_sync(self.ownership.release, session_id)

    async def lost(self, session_id: str) -> None:
        """Another node took the session: stop this node's actor of it."""
        self.ownership.lose(session_id)
        log.warning("session %s: lease lost to another node; its actor here stops", session_id)
        if self.stop_local is not None:
            await self.stop_local(session_id)

    # -- the loops -----------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(self._listen)
            ended = await trio.to_thread.run_sync(self.ownership.restarted)
            if ended:
                log.warning("node %s restarted: taking its %d sessions over", self.node_id, ended)
            await self._seen()
            lapse = await self._take_over()
            nursery.start_soon(self._renewing)
            nursery.start_soon(self._taking_over, lapse)
            task_status.started()

    async def _seen(self) -> None:
        with contextlib.suppress(Exception):
            await trio.to_thread.run_sync(self.ownership.seen, self.url, self.draining)

    async def _renewing(self) -> None:
        # On a fixed schedule: a slow renewal (a loaded machine, a busy pool) does
        # not push the next one back, which would eat into the TTL.
        due = trio.current_time()
        while True:
            due = max(due + self.settings.renew_every, trio.current_time())
            await trio.sleep_until(due)
            await self.renew_once()

    async def renew_once(self) -> None:
        try:
            lost = await trio.to_thread.run_sync(self.ownership.renew_all)
        except Exception as error:  # the database is down: the writes it fences say so
            log.warning("lease renewal failed (%s); trying again", error)
            return
        for session_id in lost:
            await self.lost(session_id)
        await self._seen()
        for session_id in list(self.ownership.held()):
            if session_id not in self._pins and not self.is_live(session_id):
                await self.release(session_id)  # owned = running here

    async def _taking_over(self, lapse: float | None) -> None:
        # Looked for again just after the next other node's heartbeat would lapse,
        # and at least every second (a lease handed over lapses at any moment): a
        # wait of a whole renewal period on top of the TTL would put the take-over
        # past TTL + 2 s.
        while True:
            wait = min(self.settings.renew_every, TAKE_OVER_EVERY)
            if lapse is not None:
                wait = min(wait, lapse + LAPSE_MARGIN)
            await trio.sleep(wait)
            lapse = await self._take_over() if not self.draining else None

    async def _take_over(self) -> float | None:
        """Claim what is claimable; in how many seconds another node's heartbeat
        lapses next (None: none is alive, or the store did not answer)."""
        try:
            found, lapse = await trio.to_thread.run_sync(self.ownership.claimable)
        except Exception as error:
            log.warning("cannot look for sessions to take over (%s)", error)
            return None
        for session_id in found:
            if self.claim is None or self.draining:
                return lapse
            if self.is_live(session_id):  # its lease lapsed under it (an outage): renewed
                continue
            try:
                await self.claim(session_id)
            except OwnedElsewhere:
                continue  # another node was quicker
            except Exception as error:
                log.warning("cannot take session %s over: %s", session_id, error)
        return lapse

    # -- the doorbell --------------------------------------------------------

    async def _listen(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED):
        token = trio.lowlevel.current_trio_token()
        started = threading.Event()
        try:
            waiting = trio.to_thread.run_sync(
                self._listen_thread, token, started, abandon_on_cancel=True
            )
            async with trio.open_nursery() as nursery:

                async def run() -> None:
                    await waiting

                nursery.start_soon(run)
                await trio.to_thread.run_sync(started.wait, 5.0, abandon_on_cancel=True)
                task_status.started()
        finally:
            self._stopping.set()

    def _listen_thread(self, token: Any, started: threading.Event) -> None:
        import psycopg

        from actors.store.ownership import EVENTS_CHANNEL, INBOX_CHANNEL

        backoff = 0.1
        while not self._stopping.is_set():
            try:
                with psycopg.connect(self.ownership.backend._conninfo, autocommit=True) as conn:
                    conn.execute(f"LISTEN {EVENTS_CHANNEL}")
                    conn.execute(f"LISTEN {INBOX_CHANNEL}")
                    started.set()
                    backoff = 0.1
                    self._ring(token, "events", "*")  # what was missed while not listening
                    self._ring(token, "inbox", "*")
                    while not self._stopping.is_set():
                        for note in conn.notifies(timeout=0.5):
                            bell = "events" if note.channel == EVENTS_CHANNEL else "inbox"
                            self._ring(token, bell, note.payload)
            except Exception as error:
                started.set()
                log.warning("store doorbell lost (%s); listening again", error)
                if self._stopping.wait(backoff):
                    return
                backoff = min(backoff * 2, 2.0)

    def _ring(self, token: Any, bell: str, payload: str) -> None:
        if bell == "events":
            target, key = self.events, payload
        else:  # a reply for a request of this node's, or a request for its sessions
            target, key = self.inbox, payload if payload.startswith("reply:") else "new"
        with contextlib.suppress(trio.RunFinishedError):
            trio.from_thread.run_sync(target.ring, key, trio_token=token)

    # -- drain ---------------------------------------------------------------

    async def drain(self, running: Callable[[], list[str]], timeout: float = DRAIN_TIMEOUT) -> None:
        """Hand every session over: no new one starts here; each session is given
        back as soon as it is not running an input (its actor suspended first,
        so it writes nothing after); past ``timeout``, the rest are suspended
        (their input interrupted) and given back too."""
        self.draining = True
        await self._seen()
        with trio.move_on_after(timeout):
            while True:
                busy = set(running())
                for session_id in list(self.ownership.held()):
                    if session_id not in busy:
                        await self._hand_over(session_id)
                if not busy:
                    break
                await trio.sleep(0.05)
        for session_id in list(self.ownership.held()):
            await self._hand_over(session_id)

    async def _hand_over(self, session_id: str) -> None:
        if self.stop_local is not None:
            await self.stop_local(session_id)
        await self.release(session_id)
        log.info("session %s handed over", session_id)
