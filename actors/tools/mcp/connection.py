"""One MCP server as a session's tool source: started when first needed, shared by
the session and its subagents, restarted after a crash, stopped with the session.

The SDK's transports and ``ClientSession`` are async context managers that must be
entered and left by one task, so each connection lives in a task of the session's
nursery (:meth:`McpConnection._serve`); calls from any task go through the open
``ClientSession``. A stdio server runs in its own process group (the SDK starts it
with a new session) and leaving the transport ends the whole group.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import httpx2
import trio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, CallToolResult, PaginatedRequestParams, Tool

from actors.tools.registry import ToolFailure
from protocol.mcp import McpServerConfig

log = logging.getLogger(__name__)
START_TIMEOUT = 60.0


class McpServerError(ToolFailure):
    """An MCP server could not be reached, or its answer could not be read."""


class McpServerCrashed(McpServerError):
    """The server went away while a call was in flight; the next call restarts it."""


def root_cause(error: BaseException) -> BaseException:
    """The first leaf of nested exception groups (anyio wraps errors in them)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _transport(config: McpServerConfig) -> AbstractAsyncContextManager[Any]:
    if config.url is not None:
        return _http_transport(config)
    command, *args = config.command
    parameters = StdioServerParameters(command=command, args=args, env=config.env, cwd=config.cwd)
    return stdio_client(parameters, errlog=sys.stderr)


@asynccontextmanager
async def _http_transport(config: McpServerConfig) -> AsyncIterator[Any]:
    assert config.url is not None
    timeout = httpx2.Timeout(30.0, read=config.call_timeout)
    async with (
        httpx2.AsyncClient(headers=config.headers, timeout=timeout) as client,
        streamable_http_client(config.url, http_client=client) as streams,
    ):
        yield streams


class McpConnection:
    """The client side of one server; ``start_soon`` runs tasks in the owner's nursery."""

    def __init__(self, config: McpServerConfig, nursery: trio.Nursery) -> None:
        self.config = config
        self._nursery = nursery
        self._lock = trio.Lock()
        self._session: ClientSession | None = None
        self._stop: trio.Event | None = None
        self._ended: trio.Event | None = None
        self._closed = False
        self.starts = 0
        """How many times the server was started (a restart counts again)."""

    async def tools(self) -> list[Tool]:
        session = await self._open()
        listed: list[Tool] = []
        cursor: str | None = None
        while True:
            try:
                if cursor is None:
                    page = await session.list_tools()
                else:
                    page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor))
            except Exception as error:
                raise self._failed(session, error, "listing tools") from None
            listed.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return listed

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        session = await self._open()
        try:
            with trio.fail_after(self.config.call_timeout):
                result = await session.call_tool(tool, arguments)
        except trio.TooSlowError:
            raise McpServerError(
                f"MCP tool {self.config.name}__{tool} took longer than "
                f"{self.config.call_timeout:g} s"
            ) from None
        except Exception as error:
            raise self._failed(session, error, f"calling {tool}") from None
        if not isinstance(result, CallToolResult):
            raise McpServerError(f"MCP server {self.config.name!r} gave no tool result for {tool}")
        return result

    async def close(self) -> None:
        """Stop the server (its whole process group for stdio), wait until it has
        gone, and refuse new calls."""
        async with self._lock:
            self._closed = True
            ended = self._ended
            self._drop()
        if ended is not None:
            await ended.wait()

    # -- the connection task ------------------------------------------------

    async def _open(self) -> ClientSession:
        async with self._lock:
            if self._closed:
                raise McpServerError(f"MCP server {self.config.name!r} is closed")
            session = self._session
            if session is None:
                try:
                    with trio.fail_after(START_TIMEOUT):
                        session = await self._nursery.start(self._serve)
                except trio.TooSlowError:
                    raise McpServerError(
                        f"MCP server {self.config.name!r} did not start within {START_TIMEOUT:g} s"
                    ) from None
                except Exception as error:
                    cause = root_cause(error)
                    raise McpServerError(
                        f"MCP server {self.config.name!r} failed to start: "
                        f"{type(cause).__name__}: {cause}"
                    ) from None
                self._session = session
                self.starts += 1
            return session

    async def _serve(self, task_status: trio.TaskStatus[ClientSession]) -> None:
        """Own the transport and the client session until told to stop."""
        stop = trio.Event()
        ended = self._ended = trio.Event()
        started = False
        try:
            async with (
                _transport(self.config) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                self._stop = stop
                started = True
                task_status.started(session)
                await stop.wait()
        except Exception as error:
            if not started:
                raise
            log.info("MCP server %s ended: %r", self.config.name, root_cause(error))
        finally:
            ended.set()

    def _drop(self) -> None:
        """Forget the open session and let its task close the transport."""
        if self._stop is not None:
            self._stop.set()
        self._stop = None
        self._session = None

    def _failed(self, session: ClientSession, error: Exception, doing: str) -> McpServerError:
        """A JSON-RPC error the server answered leaves the connection up; anything
        else (the connection closed, the process died) drops it for a restart."""
        cause = root_cause(error)
        name = self.config.name
        if isinstance(cause, MCPError) and cause.code != CONNECTION_CLOSED:
            return McpServerError(f"MCP server {name!r} refused {doing}: {cause.message}")
        if self._session is session:
            self._drop()
        return McpServerCrashed(
            f"MCP server {name!r} failed while {doing} ({type(cause).__name__}: {cause}); "
            "it will be restarted on the next call"
        )
