"""Answering requests: one reply frame, or one typed error, per request id.

Subscriptions are the connection's own business (they send frames for as long as
they last); every other request is answered here from the registry and the
environments. Every failure becomes an ``error`` frame with a stable code.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any

import msgspec
import trio

from actors.kernel import (
    ActorError,
    ActorFailedError,
    ActorRef,
    AskTimeoutError,
    DeadActorError,
    Rejection,
    SpawnError,
    UnknownAddressError,
)
from actors.server.environments import Environments
from actors.server.records import Record
from actors.server.registry import SessionRegistry
from actors.session.approvals import ApprovalNotFound
from actors.session.lifecycle import SessionClosed
from actors.session.turns import conversation
from actors.store import Store
from actors.store.health import StoreUnavailable
from protocol.environment import ExecCommand, ReadFile, WriteFile, effective_timeout_ms
from protocol.events import WarningEvent, event_record
from protocol.session import (
    Abort,
    AnswerApproval,
    Compact,
    ExtendLimit,
    FollowUp,
    Interrupt,
    Rewind,
    Steer,
    Submit,
    UpdateConfig,
)
from protocol.wire import (
    AbortSession,
    AddEnvironment,
    AddEnvironmentAlias,
    Compacted,
    CompactSession,
    ConfigUpdated,
    CreateSession,
    EnvironmentAdded,
    EnvironmentList,
    ErrorReply,
    ExecInEnvironment,
    ExecReply,
    ExtendSessionLimit,
    FileReply,
    FollowUpSession,
    ForkSession,
    GetServerOptions,
    GetSession,
    InterruptSession,
    ListEnvironments,
    ListSessions,
    Ok,
    ReadEnvironmentFile,
    RemoveEnvironment,
    Reply,
    Request,
    RequestId,
    ResolveApproval,
    RewindSession,
    Rewound,
    SessionCreated,
    SessionDetail,
    SessionList,
    SteerSession,
    SubmitInput,
    UpdateSessionConfig,
    WriteEnvironmentFile,
    WriteReply,
)

if TYPE_CHECKING:
    from actors.access.peers import Peer

log = logging.getLogger("troupe.server")
REFUSED_ANSWER = "refused_answer"
"""The warning's kind when a session's own process tried to answer for the user
(``troupe audit`` lists it)."""
SESSION_ASK_TIMEOUT = 30.0
COMPACT_TIMEOUT = 600.0
"""A compaction asks the model for a summary: as long as a model call may take."""
ENV_ASK_MARGIN = 30.0


class Services(msgspec.Struct, frozen=True):
    """What a connection may reach: the server's registry, environments and store."""

    registry: SessionRegistry
    environments: Environments
    store: Store


class AnsweredFromInside(Rejection):
    """An approval answer or config change from a process the server's own
    commands started (see :mod:`actors.access.peers`)."""

    code = "forbidden"


async def answer(
    services: Services,
    request: Request,
    serving: ActorRef | None = None,
    peer: Peer | None = None,
) -> Reply | ErrorReply:
    """The reply to ``request``, or the error that says why there is none.
    ``serving``: the connection that serves a new session's ``client_operations``.
    ``peer``: the connection's TCP ends; an approval answer or a config change from
    a process one of the server's commands started is refused and audited."""
    try:
        session = getattr(request, "session", None)
        if isinstance(session, str):  # a stored session is read when first named
            await services.registry.load(session)
        if peer is not None and isinstance(request, ResolveApproval | UpdateSessionConfig):
            await _refuse_from_inside(services, request, peer)
        if services.registry.fleet is not None:  # only a fleet's node forwards
            from actors.server.inbox import forward_if_elsewhere

            forwarded = await forward_if_elsewhere(services.registry, request)
            if forwarded is not None:  # another node runs the session: its answer
                return forwarded
        return await _answer(services, request, serving)
    except Exception as error:
        return error_reply(request.id, error)


async def _refuse_from_inside(
    services: Services, request: ResolveApproval | UpdateSessionConfig, peer: Peer
) -> None:
    groups = services.environments.running_groups()
    if not groups or not peer.loopback:
        return
    from actors.access.peers import command_peer

    found = await trio.to_thread.run_sync(command_peer, peer, groups)
    if found is None:
        return
    pid, group = found
    what = "answer an approval" if isinstance(request, ResolveApproval) else "change the config"
    text = (
        f"refused: process {pid}, started by a command this server runs (process group "
        f"{group}), may not {what} of session {request.session}"
    )
    log.warning("%s", text)
    record = services.registry.records.get(request.session.removeprefix("/sessions/").strip("/"))
    if record is not None and record.actor is not None:
        record.actor.hub.emit(WarningEvent(text, category=REFUSED_ANSWER))
    elif record is not None and record.hub is not None:  # not started yet: its own hub
        record.hub.emit(WarningEvent(text, category=REFUSED_ANSWER))
    raise AnsweredFromInside(text)


def _open_on_fleet(registry: SessionRegistry, record: Record) -> bool:
    """A fleet's session that was mid-input and runs on no node now: its owner's
    lease lapsed and no node has taken it yet, or this node is taking it over.
    Routing sent its approval answer here, so it is claimed (or its claim awaited)
    as the take-over would, which opens its approval again, and then answered,
    rather than read as a stored session with nothing waiting."""
    return registry.fleet is not None and not record.live and record.state not in IDLE_OR_CLOSED


IDLE_OR_CLOSED = ("idle", "closed")


def error_reply(request_id: RequestId | None, error: Exception) -> ErrorReply:
    """The typed error frame for whatever went wrong while answering."""
    if isinstance(error, Rejection):
        return ErrorReply(request_id, error.code, str(error))
    if isinstance(error, SpawnError) and isinstance(error.__cause__, Rejection):
        # A session whose environment refused it as it started (no daemon, no host):
        # the environment's own typed error, not the actor that could not start.
        return ErrorReply(request_id, error.__cause__.code, str(error.__cause__))
    if isinstance(error, UnknownAddressError):
        return ErrorReply(request_id, "not_found", str(error))
    if isinstance(error, DeadActorError):
        return ErrorReply(request_id, "unavailable", str(error))
    if isinstance(error, AskTimeoutError):
        return ErrorReply(request_id, "timeout", str(error))
    if isinstance(error, ActorFailedError):
        return ErrorReply(request_id, "internal", str(error))
    if isinstance(error, ActorError | msgspec.ValidationError | ValueError):
        return ErrorReply(request_id, "invalid_request", str(error))
    log.error("request failed", exc_info=error)
    return ErrorReply(request_id, "internal", f"{type(error).__name__}: {error}")


_WRITES = {
    CreateSession: "creating a session",
    SubmitInput: "a new input",
    SteerSession: "steering",
    FollowUpSession: "a follow-up",
    UpdateSessionConfig: "a config change",
    ExtendSessionLimit: "extending the limit",
    RewindSession: "a rewind",
    ForkSession: "a fork",
    ResolveApproval: "an approval answer",
    AddEnvironment: "adding an environment",
    AddEnvironmentAlias: "adding an environment",
    RemoveEnvironment: "removing an environment",
}
"""Requests refused while the store cannot write: each would start work (or change
what is stored) that could not be recorded. Reads, subscriptions, interrupts and
aborts still go through."""


async def _answer(services: Services, request: Request, serving: ActorRef | None) -> Reply:
    registry = services.registry
    what = next((what for kind, what in _WRITES.items() if isinstance(request, kind)), None)
    if what is not None:
        services.store.health.refuse(what)
    match request:
        case CreateSession():
            config = request.config
            if request.preset is not None:
                from actors.session.presets import preset_config

                config = preset_config(request.preset, config)
            served = frozenset(request.client_operations) if serving is not None else frozenset()
            record = await registry.create(
                request.profile, request.environment, request.working_dir, config,
                client=(serving, served) if serving is not None and served else None,
            )  # fmt: skip
            return SessionCreated(request.id, record.info())
        case ListSessions():
            # A database that cannot be read now (PostgreSQL down): the list is
            # what this server holds, as it was last read.
            with contextlib.suppress(StoreUnavailable):
                await registry.refresh()
            return SessionList(request.id, registry.infos())
        case GetServerOptions():
            from actors.server.options import server_options  # the model catalog, the presets

            return server_options(request.id, registry.models.settings)
        case GetSession():
            from actors.server.reply_history import without_image_bytes

            record = registry.record(request.session)
            history = without_image_bytes(conversation(await services.store.history(record.row.id)))
            pending = [event_record(e) for e in registry.pending_approvals(request.session)]
            return SessionDetail(request.id, record.info(), history, pending)
        case (
            SubmitInput() | SteerSession() | FollowUpSession() | AbortSession() | InterruptSession()
        ):
            await _tell_session(registry, request)
            return Ok(request.id)
        case UpdateSessionConfig():
            record = await _live(registry, request.session)
            changes: dict[str, Any] = {
                name: value
                for name in (
                    "model",
                    "reasoning_effort",
                    "max_turns",
                    "max_tool_rounds_per_input",
                    "approval_mode",
                    "nobody_to_ask",
                    "provider_options",
                )
                if (value := getattr(request, name)) is not None
            }
            assert record.ref is not None
            config = await record.ref.ask(UpdateConfig(**changes), timeout=SESSION_ASK_TIMEOUT)
            record.config = config
            return ConfigUpdated(request.id, config)
        case ExtendSessionLimit():
            record = await _live(registry, request.session)
            assert record.ref is not None
            config = await record.ref.ask(ExtendLimit(request.by), timeout=SESSION_ASK_TIMEOUT)
            record.config = config
            return ConfigUpdated(request.id, config)
        case CompactSession():
            record = await _live(registry, request.session)
            assert record.ref is not None
            outcome = await record.ref.ask(Compact(request.instructions), timeout=COMPACT_TIMEOUT)
            return Compacted(request.id, outcome)
        case RewindSession():
            record = await _live(registry, request.session)
            assert record.ref is not None
            code = None
            if request.mode != "conversation":
                from actors.server.tree_points import snapshot_at_input

                code = await snapshot_at_input(services.store, record.row.id, request.to_seq)
            rewind = Rewind(
                request.to_seq,
                conversation=request.mode != "code",
                summarize=request.summarize,
                instructions=request.instructions,
                code_snapshot=code,
            )
            outcome = await record.ref.ask(rewind, timeout=COMPACT_TIMEOUT)
            return Rewound(request.id, outcome)
        case ForkSession():
            from actors.server.forks import fork_session

            return await fork_session(registry, services.store, request)
        case ResolveApproval():
            record = registry.record(request.session)
            if record.unstarted or _open_on_fleet(registry, record):
                record = await registry.live(request.session)  # its actor answers
            if record.state == "closed":
                raise SessionClosed(f"session {request.session} is closed")
            if record.approvals is None:  # stored: nothing waits for an answer now
                raise ApprovalNotFound(f"no pending approval request {request.request_id}")
            if record.ref is None:
                record.approvals.resolve(request.request_id, request.approved, request.message)
                return Ok(request.id)
            answer = AnswerApproval(
                request.request_id, request.approved, request.message, request.scope
            )
            await record.ref.ask(answer, timeout=SESSION_ASK_TIMEOUT)
            return Ok(request.id)
        case _:
            return await _environment_request(services.environments, request)


async def _live(registry: SessionRegistry, session: str):
    record = await registry.live(session)
    if not record.live or record.state == "closed":
        raise SessionClosed(f"session {session} is closed")
    return record


async def _tell_session(registry: SessionRegistry, request: Any) -> None:
    """Submit, steer, follow up or abort; a stored session is resumed first.

    Asked rather than told so that a closed session's refusal comes back."""
    if isinstance(request, AbortSession | InterruptSession):
        record = registry.record(request.session)
        if record.unstarted:  # running here, though its actor has not started yet
            record = await registry.live(request.session)
        if not record.live:
            raise SessionClosed(f"session {request.session} is not running")
        if isinstance(request, AbortSession):
            message: Any = Abort(request.reason)
        else:
            message = Interrupt(immediate=request.immediate)
    else:
        record = await _live(registry, request.session)
        kind = {SubmitInput: Submit, SteerSession: Steer, FollowUpSession: FollowUp}
        message = kind[type(request)](request.text)
    assert record.ref is not None
    await record.ref.ask(message, timeout=SESSION_ASK_TIMEOUT)


async def _environment_request(environments: Environments, request: Request) -> Reply:
    match request:
        case ExecInEnvironment():
            ref = environments.resolve(request.environment)
            timeout = effective_timeout_ms(request.timeout_ms) / 1000 + ENV_ASK_MARGIN
            command = ExecCommand(
                request.command, timeout_ms=request.timeout_ms, working_dir=request.working_dir
            )
            return ExecReply(request.id, await ref.ask(command, timeout=timeout))
        case ReadEnvironmentFile():
            ref = environments.resolve(request.environment)
            read = ReadFile(
                request.path, request.offset, request.limit, line_numbers=request.line_numbers
            )
            return FileReply(request.id, await ref.ask(read, timeout=ENV_ASK_MARGIN))
        case WriteEnvironmentFile():
            ref = environments.resolve(request.environment)
            write = WriteFile(request.path, request.content)
            return WriteReply(request.id, await ref.ask(write, timeout=ENV_ASK_MARGIN))
        case ListEnvironments():
            if request.check:
                return EnvironmentList(request.id, await environments.checked_summaries())
            return EnvironmentList(request.id, environments.summaries())
        case AddEnvironment():
            summary = await environments.add(request.name, request.spec)
            return EnvironmentAdded(request.id, summary)
        case AddEnvironmentAlias():  # the per-kind frames of the last release
            added = request.as_add()
            return EnvironmentAdded(request.id, await environments.add(added.name, added.spec))
        case RemoveEnvironment():
            await environments.remove(request.environment)
            return Ok(request.id)
    raise ValueError(f"unsupported request {type(request).__name__}")
