"""Middleware around a client's provider calls (unified-llm-spec §2.3), and ``retry``.

A middleware wraps both kinds of call: :meth:`Middleware.complete` gets the request
and the next step; :meth:`Middleware.stream` gets the request and the next step's
event iterator and yields events. The client chains them onion-style: the first
registered sees the request first and the response last. Each stream layer closes
the layer below it (``aclosing``), so leaving a stream early closes the HTTP
response at the bottom at once.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from typing import TypeVar

import trio

from actors.models.errors import ModelError
from actors.models.retry import RetryPolicy
from protocol.llm import Finish, Request, Response, StreamEvent, StreamFailed

CompleteNext = Callable[[Request], Awaitable[Response]]
StreamNext = Callable[[Request], AsyncGenerator[StreamEvent, None]]
T = TypeVar("T")


class Middleware:
    """Pass-through; override either method (or both)."""

    async def complete(self, request: Request, call_next: CompleteNext) -> Response:
        return await call_next(request)

    async def stream(
        self, request: Request, call_next: StreamNext
    ) -> AsyncGenerator[StreamEvent, None]:
        async with aclosing(call_next(request)) as events:
            async for event in events:
                yield event


class LoggingMiddleware(Middleware):
    """Logs each call's provider, model, tokens and latency (stdlib ``logging``)."""

    def __init__(self, logger: logging.Logger | None = None) -> None:
        self.log = logger or logging.getLogger("troupe.models")

    async def complete(self, request: Request, call_next: CompleteNext) -> Response:
        started = time.perf_counter()
        self.log.info("LLM request: provider=%s model=%s", request.provider, request.model)
        response = await call_next(request)
        self._done(response, started)
        return response

    async def stream(
        self, request: Request, call_next: StreamNext
    ) -> AsyncGenerator[StreamEvent, None]:
        started = time.perf_counter()
        self.log.info("LLM stream: provider=%s model=%s", request.provider, request.model)
        async with aclosing(call_next(request)) as events:
            async for event in events:
                if type(event) is Finish:
                    self._done(event.response, started)
                elif type(event) is StreamFailed:
                    self.log.warning("LLM stream failed: %s", event.error.message)
                yield event

    def _done(self, response: Response, started: float) -> None:
        elapsed = time.perf_counter() - started
        self.log.info("LLM response: tokens=%d latency=%.3fs", response.usage.total_tokens, elapsed)


async def retry(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    on_retry: Callable[[ModelError, int, float], None] | None = None,
    rng: random.Random | None = None,
) -> T:
    """Run ``call`` until it succeeds or the policy gives up (the spec's ``retry()``).

    Only typed :class:`ModelError`s are retried, as the policy decides; the backoff is
    a plain ``trio.sleep``, so cancelling the caller cancels the wait."""
    attempt = 0
    while True:
        try:
            return await call()
        except ModelError as error:
            delay = policy.delay(attempt, error, rng)
            if delay is None:
                raise
            if on_retry is not None:
                on_retry(error, attempt, delay)
            await trio.sleep(delay)
            attempt += 1


class RetryMiddleware(Middleware):
    """Retries a whole answer, or a stream until its first event; never after that
    (the spec: no retry once partial data was delivered)."""

    def __init__(
        self,
        policy: RetryPolicy | None = None,
        on_retry: Callable[[ModelError, int, float], None] | None = None,
    ) -> None:
        self.policy = policy or RetryPolicy()
        self.on_retry = on_retry

    async def complete(self, request: Request, call_next: CompleteNext) -> Response:
        return await retry(lambda: call_next(request), self.policy, on_retry=self.on_retry)

    async def stream(
        self, request: Request, call_next: StreamNext
    ) -> AsyncGenerator[StreamEvent, None]:
        attempt = 0
        while True:
            events = call_next(request)
            try:
                first = await events.__anext__()
            except StopAsyncIteration:
                await events.aclose()
                return
            except ModelError as error:
                await events.aclose()
                delay = self.policy.delay(attempt, error)
                if delay is None:
                    raise
                if self.on_retry is not None:
                    self.on_retry(error, attempt, delay)
                await trio.sleep(delay)
                attempt += 1
                continue
            async with aclosing(events):
                yield first
                async for event in events:
                    yield event
            return
