"""``troupe acp``: an Agent Client Protocol agent speaking JSON-RPC 2.0, one message
per line, on stdin/stdout, in front of a Troupe server (embedded or ``--connect``).

Like every host it only translates: ACP requests become session requests on the
WebSocket protocol, session events become ``session/update`` notifications, and
approval requests become ``session/request_permission`` requests to the editor
whose answers go back as ``resolve_approval``. No session logic lives here.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import trio

from actors.acp.client_files import EditorRefused, serve_client_calls, served_operations
from actors.acp.handshake import initialize_result
from actors.acp.params import (
    INTERNAL,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    AcpError,
    invalid_request,
    prompt_text,
    session_servers,
)
from actors.acp.updates import tool_kind, update_of
from protocol.client_errors import RequestError
from protocol.events import (
    ApprovalRequestEvent,
    ProcessingEndEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    TurnLimitEvent,
)
from protocol.session import SessionConfig
from protocol.wire import (
    CreateSession,
    ForkSession,
    GetSession,
    InterruptSession,
    ResolveApproval,
    SubmitInput,
    SubscribeSession,
)

log = logging.getLogger(__name__)
EOF_GRACE = 5.0
TERMINAL_MATCH_WAIT = 1.0
SERVERLESS = frozenset({"initialize", "authenticate"})
"""Methods answered without the server (before it has started)."""

if TYPE_CHECKING:
    from protocol.client import TroupeClient


@dataclass
class Prompt:
    """One running ``session/prompt``: ended by the input's processing_end."""

    done: trio.Event = field(default_factory=trio.Event)
    stop_reason: str = "end_turn"
    cancelled: bool = False
    open_calls: set[str] = field(default_factory=set)
    """Tool calls announced and not yet ended (an interrupt leaves them open)."""


@dataclass
class AcpSession:
    id: str
    cwd: str
    prompt: Prompt | None = None
    replay_until: int | None = None
    """While loading: the last stored event's seq (None until the server says)."""
    replaying: bool = False
    replayed: trio.Event = field(default_factory=trio.Event)
    last_seq: int = 0
    commands: list[str] = field(default_factory=list)
    """Command (execute-kind) tool calls running now, by call id."""
    command_started: trio.Event = field(default_factory=trio.Event)


class AcpAgent:
    """Serves one editor connection."""

    def __init__(
        self,
        output: trio.abc.SendStream,
        defaults: SessionConfig | None = None,
        client_capabilities: dict[str, Any] | None = None,
    ) -> None:
        """``defaults``: the resolved configuration's session settings (model,
        policy, effort); None leaves them to the server's own configuration.
        ``client_capabilities``: the editor's, when its ``initialize`` was
        answered before the agent started."""
        self.defaults = defaults or SessionConfig()
        self._client: TroupeClient | None = None
        self._connected = trio.Event()
        self._read_all_sent = trio.Event()
        self._output = output
        self._write_lock = trio.Lock()
        self._sessions: dict[str, AcpSession] = {}
        self._ids = itertools.count(1)
        self._waiting: dict[int, tuple[trio.Event, list[Any]]] = {}
        self.client_capabilities: dict[str, Any] = client_capabilities or {}

    @property
    def client(self) -> TroupeClient:
        """The server's client (only used once :meth:`serve` has connected)."""
        assert self._client is not None, "used before the server was connected"
        return self._client

    async def serve(
        self, lines: AsyncIterator[bytes], host: AbstractAsyncContextManager[TroupeClient]
    ) -> None:
        """Handle messages until the editor closes stdin; requests already received
        still get their answers (for up to ``EOF_GRACE`` seconds once the server
        is there).

        ``host`` opens the client of the server the sessions run on. An editor
        sends ``initialize`` as soon as it starts the agent and waits for the
        answer before anything else. The answer needs no server, so it is given
        first, and the server (an embedded one imports and starts the whole
        runtime: most of the start-up) starts after it, once ``lines`` gives an
        empty line, which says the editor has sent nothing more for now. Every
        other request waits for the server."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._read, lines, nursery.cancel_scope)
            await self._read_all_sent.wait()
            async with host as client:
                self._client = client
                self._connected.set()
                nursery.start_soon(
                    serve_client_calls, client, self._ask_editor, self._show_terminal
                )
                await self._follow_events()

    async def _read(self, lines: AsyncIterator[bytes], done: trio.CancelScope) -> None:
        async with trio.open_nursery() as handlers:
            async for line in lines:
                if line.strip():
                    await self._receive(line, handlers)
                elif not line:
                    self._read_all_sent.set()
            self._read_all_sent.set()
            await self._connected.wait()
            handlers.cancel_scope.deadline = trio.current_time() + EOF_GRACE
        done.cancel()

    # -- the wire -------------------------------------------------------------

    async def _send(self, message: dict[str, Any]) -> None:
        message = {"jsonrpc": "2.0", **message}
        async with self._write_lock:
            await self._output.send_all(msgspec.json.encode(message) + b"\n")

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self._send({"method": method, "params": params})

    async def ask_client(self, method: str, params: dict[str, Any]) -> Any:
        """A request to the editor; returns its result or raises AcpError."""
        request_id = next(self._ids)
        answered = trio.Event()
        slot: list[Any] = []
        self._waiting[request_id] = (answered, slot)
        try:
            await self._send({"id": request_id, "method": method, "params": params})
            await answered.wait()
        finally:
            self._waiting.pop(request_id, None)
        reply = slot[0]
        if "error" in reply:
            error = reply["error"] or {}
            raise AcpError(error.get("code", INTERNAL), error.get("message", "client error"))
        return reply.get("result")

    async def _ask_editor(self, method: str, params: dict[str, Any]) -> Any:
        try:
            return await self.ask_client(method, params)
        except AcpError as error:
            raise EditorRefused(error.code, str(error)) from None

    async def _show_terminal(self, session_id: str, terminal_id: str) -> None:
        """Embed a command's terminal in its tool call, when the call is known: the
        session's one running command (its start event may still be on its way)."""
        session = self._sessions.get(session_id)
        if session is None:
            return
        with trio.move_on_after(TERMINAL_MATCH_WAIT):
            while not session.commands:
                await session.command_started.wait()
        if len(session.commands) == 1:
            update = {"sessionUpdate": "tool_call_update", "toolCallId": session.commands[0],
                      "content": [{"type": "terminal", "terminalId": terminal_id}]}  # fmt: skip
            await self.notify("session/update", {"sessionId": session_id, "update": update})

    async def _receive(self, line: bytes, nursery: trio.Nursery) -> None:
        try:
            message = msgspec.json.decode(line)
        except msgspec.DecodeError as error:
            await self._send({"id": None, "error": {"code": PARSE_ERROR, "message": str(error)}})
            return
        problem = invalid_request(message)
        if problem is not None:
            await self._send({"id": None, "error": {"code": INVALID_REQUEST, "message": problem}})
            return
        assert isinstance(message, dict)
        if "method" not in message:
            waiting = self._waiting.get(message.get("id"))  # type: ignore[arg-type]
            if waiting is not None:
                waiting[1].append(message)
                waiting[0].set()
            return
        if message["method"] in SERVERLESS:  # at once, before anything read after it
            await self._answer(message)
        else:
            nursery.start_soon(self._answer, message)

    async def _answer(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params") or {}
        request_id = message.get("id")
        try:
            handler = self._handlers().get(method)
            if handler is None:
                raise AcpError(METHOD_NOT_FOUND, f"unknown method {method}")
            if method not in SERVERLESS:
                await self._connected.wait()
            if not isinstance(params, dict):
                raise AcpError(INVALID_PARAMS, "params must be an object")
            result = await handler(params)
        except AcpError as error:
            reply: dict[str, Any] = {"error": {"code": error.code, "message": str(error)}}
        except RequestError as error:
            reply = {"error": {"code": INVALID_PARAMS, "message": str(error)}}
        except (KeyError, TypeError, ValueError, msgspec.ValidationError) as error:
            reply = {"error": {"code": INVALID_PARAMS, "message": f"bad params: {error}"}}
        else:
            reply = {"result": result}
        if "id" in message:  # a request (a notification gets no answer)
            await self._send({"id": request_id, **reply})

    def _handlers(self) -> dict[str, Any]:
        return {
            "initialize": self.initialize,
            "authenticate": self.authenticate,
            "session/new": self.new_session,
            "session/load": self.load_session,
            "session/fork": self.fork_session,
            "session/prompt": self.prompt,
            "session/cancel": self.cancel,
        }

    # -- methods ---------------------------------------------------------------

    async def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        """Usually answered before the runtime was imported
        (:func:`actors.acp.handshake.answer_initialize`); here when the editor
        sends it again, or after something else."""
        self.client_capabilities = params.get("clientCapabilities") or {}
        return initialize_result(params)

    async def authenticate(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd = params["cwd"]
        if not isinstance(cwd, str) or not Path(cwd).is_absolute():
            raise AcpError(INVALID_PARAMS, "cwd must be an absolute path")
        servers = await session_servers(Path(cwd), params.get("mcpServers") or [])
        created = await self.client.request(
            CreateSession,
            working_dir=cwd,
            config=msgspec.structs.replace(self.defaults, mcp_servers=servers),
            client_operations=served_operations(self.client_capabilities),
        )
        session_id = created.session.session_id
        self._sessions[session_id] = AcpSession(session_id, cwd)
        await self.client.request(SubscribeSession, session=session_id)
        return {"sessionId": session_id}

    async def load_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """Replay a stored session's history as updates, then answer (ACP's order)
        with an empty object (the schema's ``LoadSessionResponse``; ``null`` is not
        one). The session keeps the MCP servers it was created with."""
        session_id, cwd = params["sessionId"], params["cwd"]
        if not isinstance(session_id, str) or not isinstance(cwd, str):
            raise AcpError(INVALID_PARAMS, "sessionId and cwd must be strings")
        session = self._sessions[session_id] = AcpSession(session_id, cwd, replaying=True)
        try:
            subscribed = await self.client.request(SubscribeSession, session=session_id)
        except RequestError:
            del self._sessions[session_id]
            raise
        session.replay_until = subscribed.last_seq
        if session.last_seq >= subscribed.last_seq:
            session.replaying = False
            session.replayed.set()
        await session.replayed.wait()
        return {}

    async def fork_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """ACP's (unstable) ``session/fork``: a new session with the whole conversation
        of ``sessionId`` (ACP names no point to fork at, and has no rewind). A
        ``cwd`` other than the original's gets its own copy of the working tree
        there (a new or empty directory); the same ``cwd`` shares the tree."""
        source, cwd = params.get("sessionId"), params.get("cwd")
        if not isinstance(source, str) or not isinstance(cwd, str) or not Path(cwd).is_absolute():
            raise AcpError(INVALID_PARAMS, "sessionId must be a string, cwd an absolute path")
        detail = await self.client.request(GetSession, session=source)
        same = Path(detail.session.working_dir or cwd) == Path(cwd)
        forked = await self.client.request(
            ForkSession, session=source, working_dir=None if same else cwd
        )
        session_id = forked.session.session_id
        self._sessions[session_id] = AcpSession(session_id, cwd)
        await self.client.request(SubscribeSession, session=session_id)
        return {"sessionId": session_id}

    async def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self._session(params["sessionId"])
        if session.prompt is not None:
            raise AcpError(INVALID_REQUEST, "a prompt is already running in this session")
        text = prompt_text(params.get("prompt") or [])
        session.prompt = prompt = Prompt()
        try:
            await self.client.request(SubmitInput, session=session.id, text=text)
            await prompt.done.wait()
        finally:
            session.prompt = None
        return {"stopReason": "cancelled" if prompt.cancelled else prompt.stop_reason}

    async def cancel(self, params: dict[str, Any]) -> None:
        """ACP's cancel stops the running input; the session stays open."""
        session = self._session(params["sessionId"])
        if session.prompt is not None:
            session.prompt.cancelled = True
            await self.client.request(InterruptSession, session=session.id, immediate=True)

    def _session(self, session_id: object) -> AcpSession:
        session = self._sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None:
            raise AcpError(INVALID_PARAMS, f"unknown session {session_id!r}")
        return session

    # -- events ------------------------------------------------------------------

    async def _follow_events(self) -> None:
        async with trio.open_nursery() as nursery:
            async for event in self.client.events():
                session = self._sessions.get(event.session_id)
                if session is None:
                    continue
                try:
                    data = event.body()
                except msgspec.ValidationError:
                    continue
                if data is None:  # a kind newer than this host
                    continue
                update = update_of(data, session.cwd, replay=session.replaying)
                if update is not None:
                    await self.notify("session/update", {"sessionId": session.id, "update": update})
                prompt = session.prompt
                _track_commands(session, data)
                match data:
                    case ToolCallStartEvent() if prompt is not None and _is_call(update):
                        prompt.open_calls.add(data.call_id)
                    case ToolCallEndEvent() if prompt is not None:
                        prompt.open_calls.discard(data.call_id)
                    case ApprovalRequestEvent():
                        nursery.start_soon(self._ask_permission, session, data)
                    case TurnLimitEvent() if session.prompt is not None:
                        session.prompt.stop_reason = "max_turn_requests"
                    case ProcessingEndEvent() if prompt is not None:
                        await self._close_open_calls(session.id, prompt)
                        prompt.done.set()
                    case _:
                        pass
                session.last_seq = max(session.last_seq, event.seq)
                until = session.replay_until
                if session.replaying and until is not None and event.seq >= until:
                    session.replaying = False
                    session.replayed.set()

    async def _close_open_calls(self, session_id: str, prompt: Prompt) -> None:
        """Calls stopped by a cancel end as failed, so the editor stops its spinners."""
        for call_id in sorted(prompt.open_calls):
            update = {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                      "status": "failed"}  # fmt: skip
            await self.notify("session/update", {"sessionId": session_id, "update": update})
        prompt.open_calls.clear()

    async def _ask_permission(self, session: AcpSession, request: ApprovalRequestEvent) -> None:
        """The editor's permission dialog for one approval request. "Always allow"
        is that exact call (the server keeps the grant, scope ``command``); the
        wider rule, when the request offers one, is a separate option that names it.
        Nothing is approved here without the editor's answer."""
        rule = request.details.get("rule")
        options = [
            {"optionId": "allow_once", "name": "Allow", "kind": "allow_once"},
            {"optionId": "allow_always", "name": "Always allow this exact call",
             "kind": "allow_always"},
        ]  # fmt: skip
        if isinstance(rule, str) and rule:
            options.append({"optionId": "allow_rule", "name": f"Always allow {rule}",
                            "kind": "allow_always"})  # fmt: skip
        options.append({"optionId": "reject_once", "name": "Reject", "kind": "reject_once"})
        params = {
            "sessionId": session.id,
            "toolCall": {
                "toolCallId": str(request.details.get("call_id", request.request_id)),
                "title": f"{request.action}: {request.subject}",
                "rawInput": request.details,
            },
            "options": options,
        }
        try:
            result = await self.ask_client("session/request_permission", params) or {}
        except AcpError:
            result = {}
        outcome = result.get("outcome") or {}
        chosen = outcome.get("optionId") if outcome.get("outcome") == "selected" else None
        approved = chosen in ("allow_once", "allow_always", "allow_rule")
        scope = {"allow_always": "command", "allow_rule": "rule"}.get(str(chosen), "once")
        try:
            await self.client.request(
                ResolveApproval, session=session.id, request_id=request.request_id,
                approved=approved, message=None if approved else "rejected in the editor",
                scope=scope,
            )  # fmt: skip
        except RequestError as error:
            log.info("approval %s: %s", request.request_id, error)


def _track_commands(session: AcpSession, data: object) -> None:
    """Keep the session's running command calls (for embedding their terminals)."""
    match data:
        case ToolCallStartEvent() if tool_kind(data) == "execute":
            session.commands.append(data.call_id)
            started, session.command_started = session.command_started, trio.Event()
            started.set()
        case ToolCallEndEvent() if data.call_id in session.commands:
            session.commands.remove(data.call_id)
        case _:
            pass


def _is_call(update: dict[str, Any] | None) -> bool:
    """A tool call the editor shows (an ``update_plan`` call is a plan instead)."""
    return update is not None and update["sessionUpdate"] == "tool_call"
