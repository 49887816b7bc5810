"""The core client (unified-llm-spec §2, Layer 3): providers by name, routing, middleware.

A provider here is one gateway actor (one endpoint: its pool, concurrency cap and
admission order) reached through a :class:`~actors.models.session.ModelSession`, so
every call made through a client shares the limits of the sessions and subagents
that use the same gateway. The client itself holds no state between requests.

``Client.complete`` and ``Client.stream`` never retry (the spec's Layer 3); the
gateways that :func:`open_client` spawns get a policy without retries, and the
high-level functions (or a :class:`~.middleware.RetryMiddleware`) retry instead.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, aclosing, asynccontextmanager
from contextvars import ContextVar
from functools import partial

import msgspec
import trio
from trio.lowlevel import RunVar

from actors.kernel import Runtime
from actors.models.client.local_files import inline_local_files
from actors.models.client.middleware import CompleteNext, Middleware, StreamNext
from actors.models.client.tokens import TokenCount, count_tokens
from actors.models.config import Endpoint, Wire, endpoint_from_env
from actors.models.errors import ConfigurationError
from actors.models.gateway import open_gateway
from actors.models.retry import RetryPolicy
from actors.models.session import ModelSession
from actors.provider_wires import of_profile, profiles
from protocol.llm import Request, Response, StreamEvent

NO_RETRY = RetryPolicy(max_retries=0)

ENV_PROVIDERS: tuple[tuple[str, str], ...] = tuple((p, of_profile(p).name) for p in profiles())
"""``Client.from_env`` order: the first provider configured becomes the default."""


class GatewayProvider:
    """The spec's ProviderAdapter (``name``, ``complete``, ``stream``) over a gateway."""

    def __init__(self, name: str, session: ModelSession) -> None:
        self.name = name
        self.session = session

    @property
    def endpoint(self) -> Endpoint:
        return self.session.connection.endpoint

    @property
    def wire(self) -> Wire:
        return self.endpoint.wire

    async def complete(self, request: Request) -> Response:
        return await self.session.complete(request)

    async def stream(self, request: Request) -> AsyncGenerator[StreamEvent, None]:
        async with self.session.stream(request) as events:
            async for event in events:
                yield event

    async def count_tokens(self, request: Request) -> TokenCount:
        return await count_tokens(self.session, request)


class Client:
    """``Client(providers={"openai": p}, default_provider="openai", middleware=[...])``."""

    def __init__(
        self,
        providers: Mapping[str, GatewayProvider],
        default_provider: str | None = None,
        middleware: Sequence[Middleware] = (),
    ) -> None:
        if default_provider is not None and default_provider not in providers:
            raise ConfigurationError(
                f"default provider {default_provider!r} is not one of {sorted(providers)}"
            )
        self.providers = dict(providers)
        self.default_provider = default_provider
        self.middleware = list(middleware)

    def resolve(self, request: Request) -> tuple[Request, GatewayProvider]:
        """The provider a request goes to (its own, else the default), never a guess."""
        name = request.provider or self.default_provider
        if name is None:
            raise ConfigurationError(
                "no provider on the request and no default provider on the client"
            )
        provider = self.providers.get(name)
        if provider is None:
            raise ConfigurationError(f"unknown provider {name!r}: one of {sorted(self.providers)}")
        if request.provider != name:
            request = msgspec.structs.replace(request, provider=name)
        return request, provider

    async def complete(self, request: Request) -> Response:
        request, provider = self.resolve(request)
        request = await inline_local_files(request)
        call: CompleteNext = provider.complete
        for layer in reversed(self.middleware):
            call = partial(layer.complete, call_next=call)
        return await call(request)

    @asynccontextmanager
    async def stream(self, request: Request) -> AsyncIterator[AsyncGenerator[StreamEvent, None]]:
        """``async with client.stream(request) as events: async for event in events``;
        leaving the block closes every middleware layer and the HTTP response."""
        request, provider = self.resolve(request)
        request = await inline_local_files(request)
        call: StreamNext = provider.stream
        for layer in reversed(self.middleware):
            call = partial(layer.stream, call_next=call)
        async with aclosing(call(request)) as events:
            yield events

    async def count_tokens(self, request: Request) -> TokenCount:
        """Input tokens of a request: the provider's count endpoint where it has one
        (Anthropic, Gemini), else an estimate (``exact`` False)."""
        request, provider = self.resolve(request)
        return await provider.count_tokens(request)

    def wire_of(self, provider: str | None) -> Wire:
        name = provider or self.default_provider
        if name is None or name not in self.providers:
            raise ConfigurationError(f"unknown provider {name!r}")
        return self.providers[name].wire


@asynccontextmanager
async def open_client(
    runtime: Runtime,
    endpoints: Mapping[str, Endpoint],
    *,
    default_provider: str | None = None,
    middleware: Sequence[Middleware] = (),
    policy: RetryPolicy = NO_RETRY,
) -> AsyncIterator[Client]:
    """A client over one new gateway actor per endpoint, stopped on exit."""
    async with AsyncExitStack() as stack:
        providers: dict[str, GatewayProvider] = {}
        for name, ep in endpoints.items():
            ref = await stack.enter_async_context(
                open_gateway(runtime, ep, policy, name=f"client-{name}")
            )
            providers[name] = GatewayProvider(name, await ModelSession.connect(ref))
        yield Client(providers, default_provider, middleware)


def endpoints_from_env(environ: Mapping[str, str] | None = None) -> dict[str, Endpoint]:
    """The providers whose variables are set (``OPENAI_API_KEY``, ...), in spec order,
    then the hosted platforms that are switched on (see ``actors.models.endpoints``)."""
    from actors.models.endpoints import platform_endpoints_from_env

    found: dict[str, Endpoint] = {}
    for name, wire in ENV_PROVIDERS:
        try:
            found[name] = endpoint_from_env(wire, environ)
        except ConfigurationError:
            continue
    found.update(platform_endpoints_from_env(environ))
    return found


@asynccontextmanager
async def open_client_from_env(
    runtime: Runtime,
    environ: Mapping[str, str] | None = None,
    *,
    middleware: Sequence[Middleware] = (),
    policy: RetryPolicy = NO_RETRY,
) -> AsyncIterator[Client]:
    """The spec's ``Client.from_env()``: the first provider configured is the default."""
    endpoints = endpoints_from_env(environ)
    default = next(iter(endpoints), None)
    async with open_client(
        runtime, endpoints, default_provider=default, middleware=middleware, policy=policy
    ) as client:
        yield client


_DEFAULT_CLIENT: ContextVar[Client | None] = ContextVar("troupe_default_client", default=None)
"""The high-level functions' client when none is passed: set per task tree (a trio
task inherits its parent's context), never a process-wide global."""


class _Lazy:
    """The client made from the environment on first use, and when it is ready."""

    def __init__(self) -> None:
        self.ready = trio.Event()
        self.client: Client | None = None
        self.error: BaseException | None = None


_LAZY_CLIENT: RunVar[_Lazy] = RunVar("troupe_lazy_client")
"""One lazily made client per ``trio.run`` (a run variable, not a process global)."""


def set_default_client(client: Client | None) -> None:
    _DEFAULT_CLIENT.set(client)


def get_default_client() -> Client:
    """The client set with :func:`set_default_client` (or made lazily by the
    high-level functions); a :class:`ConfigurationError` when there is none yet."""
    client = _DEFAULT_CLIENT.get()
    if client is None:
        try:
            client = _LAZY_CLIENT.get().client
        except LookupError:
            client = None
    if client is None:
        raise ConfigurationError(
            "no default client: pass client=..., call set_default_client(), or let "
            "generate() make one from the environment"
        )
    return client


async def default_client() -> Client:
    """The default client; made from the environment on first use (spec §2.5).

    Gateways are actors, so the lazy client gets a runtime of its own, hosted by a
    trio system task that lives as long as the ``trio.run`` it was made in."""
    client = _DEFAULT_CLIENT.get()
    if client is not None:
        return client
    try:
        lazy = _LAZY_CLIENT.get()
    except LookupError:
        lazy = _Lazy()
        _LAZY_CLIENT.set(lazy)
        trio.lowlevel.spawn_system_task(_host_lazy_client, lazy, name="troupe-default-client")
    await lazy.ready.wait()
    if lazy.client is None:
        raise ConfigurationError(f"the default client could not be made: {lazy.error}")
    return lazy.client


async def _host_lazy_client(lazy: _Lazy) -> None:
    try:
        async with Runtime() as runtime, open_client_from_env(runtime) as client:
            lazy.client = client
            lazy.ready.set()
            await trio.sleep_forever()
    except Exception as error:  # a system task must not raise: the callers are told
        lazy.error = error
    finally:
        lazy.ready.set()
