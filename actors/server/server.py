"""The Troupe server: a runtime, the store, the session registry and the WebSocket
gateway, hosted together.

``run_server`` is embeddable (``await nursery.start(run_server, config)`` returns a
:class:`RunningServer` with its URL); ``troupe serve`` and the embedded mode of
``troupe run`` are two hosts of it. It binds 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import trio

from actors.access.auth import Origins, load_or_create_token
from actors.access.peers import Peer
from actors.access.token_file import token_path
from actors.kernel import Runtime
from actors.server.dispatch import Services, answer
from actors.server.environments import Environments
from actors.server.fence import own_paths
from actors.server.fleet import Fleet, FleetSettings, node_id_for
from actors.server.handshake import Policy, Refused, read_hello, upgrade
from actors.server.inbox import serve_inbox
from actors.server.leftovers import end_leftover_groups, reporting_ledger
from actors.server.models import Models, ModelSettings
from actors.server.registry import SessionRegistry
from actors.server.restarts import report_restarts
from actors.server.store_faults import interrupt_on_store_faults
from actors.store import Store, open_store
from actors.store.health import StoreUnavailable
from actors.telemetry import TelemetrySettings, open_telemetry
from actors.web.listener import DualListener
from actors.web.pages import WebPages
from protocol.wire import DEFAULT_MAX_FRAME, PROTOCOL_VERSION, Codec, Welcome

if TYPE_CHECKING:
    from trio_websocket import WebSocketRequest

log = logging.getLogger("troupe.server")


class ServerConfig(msgspec.Struct, frozen=True):
    data_dir: Path
    host: str = "127.0.0.1"
    port: int = 7707
    working_dir: Path = Path(".")
    models: ModelSettings = ModelSettings()
    origins: frozenset[str] = frozenset()
    """Browser origins admitted besides the server's own (scheme, host and port),
    each exactly as a browser sends it (``https://app.example``)."""
    max_frame_bytes: int = DEFAULT_MAX_FRAME
    outbox_bytes: int = 4 << 20
    """Encoded bytes a client may fall behind by (one larger frame is always let in)."""
    slow_client_timeout: float = 5.0
    """Once its outbox is full, a client must drain half of it within this many
    seconds, or it is disconnected (4008) and resumes from its cursor."""
    client_call_timeout: float = 20.0
    """Seconds a client has to answer a ``client_call`` (an operation it serves for
    its session); past it the tool gets ``client_timeout``."""
    replay_buffer_bytes: int = 2 << 20
    """Bytes of recent durable events each live session keeps for resubscribers
    (older ones are read from the store)."""
    grace: float = 3.0
    kill_grace: float = 2.0
    """Seconds between SIGTERM and SIGKILL for the commands the server's sessions run."""
    advertise: bool = True
    """Write ``server.json`` (the URL) in the data dir for ``troupe sessions``/``attach``;
    an embedded server (``troupe run``) does not."""
    telemetry: TelemetrySettings = TelemetrySettings()
    """OpenTelemetry export of every session's spans and metrics (off by default)."""
    store: str = ""
    """Where sessions are kept: "" or ``sqlite`` for ``troupe.db`` in ``data_dir``,
    or a ``postgresql://`` URL (the token, process ledger and ``server.json`` stay
    in ``data_dir`` either way: they are this machine's)."""
    fleet: FleetSettings = FleetSettings()
    """With PostgreSQL, this server is one node of a fleet: its id and leases
    (:mod:`actors.server.fleet`)."""


class RunningServer:
    """A started server: where it listens and what it holds."""

    def __init__(
        self, config: ServerConfig, runtime: Runtime, store: Store, registry: SessionRegistry
    ) -> None:
        self.config = config
        self.runtime = runtime
        self.store = store
        self.registry = registry
        self.port = 0
        self.token = ""
        self.pages: WebPages | None = None
        self.fleet: Fleet | None = None
        self._stop = trio.Event()

    @property
    def url(self) -> str:
        host = self.config.host
        host = f"[{host}]" if ":" in host else host
        return f"ws://{host}:{self.port}/"

    @property
    def http_url(self) -> str:
        return "http" + self.url.removeprefix("ws")

    def login_url(self) -> str:
        """A one-time URL that logs a browser in to the web page (``troupe
        login-link`` asks the running server for another over HTTP)."""
        assert self.pages is not None, "the server has not started"
        return self.pages.login_url()

    @property
    def token_file(self) -> Path:
        return token_path(self.config.data_dir)

    def stop(self) -> None:
        self._stop.set()

    async def drain(self) -> None:
        """On a fleet: hand every session to the other nodes (idle ones at once,
        running ones as their input ends), then stop. Elsewhere: stop."""
        if self.fleet is not None:
            registry = self.registry

            def running() -> list[str]:
                return [
                    r.row.id for r in registry.records.values()
                    if r.live and r.state == "processing"
                ]  # fmt: skip

            await self.fleet.drain(running)
        self.stop()

    def unready_because(self) -> str | None:
        """Why new work should go elsewhere now (``/readyz``), or None."""
        return None if self.store.health.available else "store_unavailable"


async def run_server(
    config: ServerConfig, *, task_status: trio.TaskStatus[RunningServer] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve until :meth:`RunningServer.stop` (or cancellation)."""
    try:
        token = load_or_create_token(config.data_dir)
    except OSError as error:  # nothing serves without a token a client can read
        raise StoreUnavailable(f"cannot write the token in {config.data_dir}: {error}") from error
    async with (
        open_telemetry(config.telemetry) as telemetry,  # outermost: flushed after the ladder
        open_store(config.data_dir, config.store) as store,
        Runtime(grace=config.grace, kill_grace=config.kill_grace) as runtime,
        trio.open_nursery() as nursery,
    ):
        try:
            ledger = reporting_ledger(config.data_dir, store.health)
        except OSError as error:
            raise StoreUnavailable(f"cannot create the process ledger: {error}") from error
        store.side_probes.append(ledger.probe)  # its faults are the store's
        nursery.start_soon(end_leftover_groups, ledger)  # what a killed predecessor left
        environments = Environments(runtime, config.working_dir, store, ledger)
        models = Models(runtime, config.models)
        registry = SessionRegistry(runtime, store, environments, models, nursery)
        registry.replay_buffer_bytes = config.replay_buffer_bytes
        registry.start_on_demand = True  # a client reaches a session through requests only
        registry.fenced_paths = own_paths(config.data_dir)
        registry.local_shadow_base = str(config.data_dir / "shadow")
        fleet = _fleet(config, store, registry, runtime, nursery)
        if telemetry is not None:
            registry.observers.append(telemetry)
        await environments.local()  # /environments/local, the server's directory
        await environments.restore()
        await registry.recover()
        report_restarts(runtime, registry, nursery)
        nursery.start_soon(interrupt_on_store_faults, registry, store)
        server = RunningServer(config, runtime, store, registry)
        server.token = token
        server.fleet = fleet
        services = Services(registry, environments, store)
        # Bound first: the server's own origin includes its port, known only now.
        listeners = await trio.open_tcp_listeners(config.port, host=config.host)
        server.port = listeners[0].socket.getsockname()[1]
        origins = Origins.serving(config.host, server.port, config.origins)
        gateway = Gateway(runtime, services, Policy(token, origins), config)
        server.pages = WebPages(token, origins, server.http_url, server.unready_because)
        if fleet is not None:  # the node's URL is known now; it takes over what lapsed
            fleet.url = server.url
            await nursery.start(fleet.run)
            nursery.start_soon(serve_inbox, fleet, partial(answer, services))
        listener = DualListener(
            gateway.handle, server.pages.handle,
            max_message_size=config.max_frame_bytes, message_queue_size=4,
            connect_timeout=10, disconnect_timeout=5,
        )  # fmt: skip
        await nursery.start(trio.serve_listeners, listener.handle, listeners)
        if config.advertise:
            try:
                _write_server_file(server)
            except OSError as error:
                log.error("store_unavailable: cannot write server.json (%s); retrying", error)
                nursery.start_soon(_advertise, server)
        task_status.started(server)
        try:
            await server._stop.wait()
        finally:
            # The runtime suspends its sessions on the way down (no session_end):
            # what they emit while stopping is stored, and they resume next time.
            nursery.cancel_scope.cancel()


def _fleet(
    config: ServerConfig,
    store: Store,
    registry: SessionRegistry,
    runtime: Runtime,
    nursery: trio.Nursery,
) -> Fleet | None:
    """With a PostgreSQL store, this server is a node of a fleet: every write is
    fenced by its leases, and a session lost to another node stops here.

    The PostgreSQL backend's module is asked for where the store loaded it, never
    imported here: it imports psycopg, the ``postgres`` extra, which a plain
    install (SQLite) does not have, and a PostgreSQL store is made only by it."""
    if "actors.store.postgres" not in sys.modules:
        return None
    from actors.store.postgres import PostgresBackend  # loaded already, by the store

    if not isinstance(store.backend, PostgresBackend):
        return None
    from actors.store.leases import LeaseSettings
    from actors.store.ownership import Ownership

    settings = config.fleet
    lease = LeaseSettings(
        settings.node_id or node_id_for(config.data_dir), settings.lease_ttl, settings.lease_renew
    )
    ownership = Ownership(store.backend, lease)
    fleet = Fleet(ownership)
    store.fence = ownership
    store.on_fenced = lambda session_id: nursery.start_soon(fleet.lost, session_id)
    registry.fleet = fleet

    async def stop_local(session_id: str) -> None:
        record = registry.records.get(session_id)
        if record is not None:
            record.hub = None  # an unstarted session is no longer this node's to start
        if record is not None and record.live and record.ref is not None:
            if record.actor is not None:
                record.actor.suspend_on_stop = True  # not ended: it goes on elsewhere
            await runtime.stop(record.ref)
        with trio.move_on_after(10):
            await store.flush()

    def is_live(session_id: str) -> bool:
        record = registry.records.get(session_id)
        return record is not None and record.runs_here

    fleet.stop_local = stop_local
    fleet.is_live = is_live
    fleet.claim = registry.take_over
    return fleet


async def _advertise(server: RunningServer) -> None:
    """Write ``server.json``; while the data directory cannot take it (full,
    read-only, gone), say so once and try again with backoff: the server serves
    meanwhile (its URL is printed), only ``troupe sessions``/``attach`` cannot find it."""
    delay = 0.05
    while True:
        await trio.sleep(delay)
        delay = min(delay * 2, 5.0)
        try:
            await trio.to_thread.run_sync(_write_server_file, server)
        except OSError:
            continue
        log.warning("server.json written at last")
        return


def _write_server_file(server: RunningServer) -> None:
    """``server.json`` tells ``troupe sessions`` and ``attach`` where to connect;
    written beside and renamed into place, so a full disk never leaves half of it."""
    path = server.config.data_dir / "server.json"
    info = {"url": server.url, "pid": os.getpid(), "token_file": str(server.token_file)}
    temporary = path.with_name(".server.json.tmp")
    try:
        temporary.write_text(json.dumps(info) + "\n")
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise


class Gateway:
    """Accepts connections and gives each one a :class:`Connection` actor."""

    def __init__(
        self, runtime: Runtime, services: Services, policy: Policy, config: ServerConfig
    ) -> None:
        self.runtime = runtime
        self.services = services
        self.policy = policy
        self.config = config
        self._count = 0

    async def handle(self, request: WebSocketRequest, peer: Peer | None = None) -> None:
        # with the first connection: the WebSocket stack, and the connection actor
        # that serves one (the listener's note on why)
        from trio_websocket import ConnectionClosed

        from actors.server.connection import Connection

        try:
            websocket, authorized = await upgrade(request, self.policy)
            hello = await read_hello(websocket, self.policy, authorized)
            self._count += 1
            name = f"c-{self._count}"
            await websocket.send_message(
                Codec("json").encode(
                    Welcome(PROTOCOL_VERSION, "troupe", name, hello.encoding,
                            self.config.max_frame_bytes)
                )
            )  # fmt: skip
            actor = Connection(
                websocket,
                Codec(hello.encoding),
                self.services,
                self.config.outbox_bytes,
                self.config.slow_client_timeout,
                self.config.client_call_timeout,
                peer,
            )
            ref = await self.runtime.spawn(actor, name=f"connections/{name}")
            await ref.wait_stopped()
        except (Refused, ConnectionClosed):
            return
