"""Model endpoints for the server's sessions: one gateway actor per wire format.

Every session of a profile shares its gateway (and so its connection pool and
concurrency cap). The endpoint comes from the usual variables
(``OPENAI_API_KEY``, ``ANTHROPIC_BASE_URL``, ...); ``base_url`` overrides the
address for every profile, which is how ``troupe demo`` and the tests point the
server at ``troupe mock-llm``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import msgspec
import trio

from actors.kernel import ActorRef, Rejection, Runtime
from actors.models.config import Wire, endpoint, endpoint_from_env
from actors.models.errors import ConfigurationError
from actors.provider_wires import of_profile
from actors.session.profiles import PROFILES, ProviderProfile
from protocol.session import SessionConfig

if TYPE_CHECKING:
    from actors.models.fallback import Route


class ModelSettings(msgspec.Struct, frozen=True):
    """Where the server's models are: ``base_url``/``api_key`` override the
    environment's variables for every profile."""

    profile: str = "openai"
    base_url: str | None = None
    api_key: str | None = None
    wire: Wire | None = None
    """Speak this wire for every profile (``openai_chat`` for a local server)."""
    fallbacks: tuple[str, ...] = ()
    """Profiles whose endpoints (with their own models) a session falls back to, in
    order, when its own endpoint fails (``troupe serve --fallback anthropic``)."""
    defaults: SessionConfig = SessionConfig()
    """The configured settings every new session starts from, whichever client
    creates it (``troupe run``, the web page, an editor over ACP): the model, the
    policy, the reasoning effort, instructions and MCP servers resolved from the
    flags and config files of ``troupe serve`` (or of the embedding command)."""

    def model_for(self, profile: str) -> str | None:
        """The configured model, for the configured profile (or every profile when
        one wire is forced: then they all talk to the same model server)."""
        if self.defaults.model is None:
            return None
        if self.wire is not None or profile == self.profile:
            return self.defaults.model
        return None

    def session_config(self, given: SessionConfig | None, profile: str) -> SessionConfig:
        """A new session's settings: what the client gave, the configured
        defaults filling in what it left unset."""
        if given is None:
            return msgspec.structs.replace(self.defaults, model=self.model_for(profile))
        changes: dict[str, object] = {}
        if given.model is None and self.model_for(profile) is not None:
            changes["model"] = self.model_for(profile)
        if given.reasoning_effort is None and self.defaults.reasoning_effort is not None:
            changes["reasoning_effort"] = self.defaults.reasoning_effort
        if given.user_instructions is None and self.defaults.user_instructions is not None:
            changes["user_instructions"] = self.defaults.user_instructions
        if not given.mcp_servers and self.defaults.mcp_servers:
            changes["mcp_servers"] = self.defaults.mcp_servers
        if not given.provider_options and self.defaults.provider_options:
            changes["provider_options"] = self.defaults.provider_options
        return msgspec.structs.replace(given, **changes) if changes else given


class UnknownProfile(Rejection):
    code = "invalid_request"


class ModelUnavailable(Rejection):
    code = "model_unavailable"


class Models:
    """Builds profiles and hands out the gateway for each profile's wire."""

    def __init__(self, runtime: Runtime, settings: ModelSettings) -> None:
        self.runtime = runtime
        self.settings = settings
        self._gateways: dict[Wire, ActorRef] = {}
        self._starting = trio.Lock()
        """One gateway start at a time: sessions created at once would otherwise
        both find none and both spawn ``models/<wire>`` (the second refused)."""
        self._profiles: dict[str, ProviderProfile] = {}
        """Built once per name (tool schemas included): each session derives its own
        copy (:meth:`ProviderProfile.derive`) and never changes this one."""

    def profile(self, name: str | None) -> ProviderProfile:
        name = name or self.settings.profile
        built = self._profiles.get(name)
        if built is not None:
            return built
        factory = PROFILES.get(name)
        if factory is None:
            raise UnknownProfile(f"unknown profile {name!r}; choose one of {sorted(PROFILES)}")
        built = self._profiles[name] = factory()
        return built

    async def gateway(self, profile: ProviderProfile) -> ActorRef:
        wire = self.settings.wire or cast(Wire, of_profile(profile.id).name)
        ref = self._gateways.get(wire)
        if ref is not None and ref.alive:
            return ref
        async with self._starting:
            return await self._start_gateway(wire)

    async def _start_gateway(self, wire: Wire) -> ActorRef:
        ref = self._gateways.get(wire)
        if ref is not None and ref.alive:  # started while we waited for the lock
            return ref
        settings = self.settings
        try:
            if settings.base_url:
                target = endpoint(wire, settings.base_url, settings.api_key or "troupe")
            else:
                target = endpoint_from_env(wire)
        except ConfigurationError as error:
            raise ModelUnavailable(str(error)) from None
        # the gateway (and httpx under it) is imported with the first one a session
        # needs: a server is ready before any, and one serving no session has none
        from actors.models.gateway import ModelGateway

        ref = await self.runtime.spawn(ModelGateway(target), name=f"models/{wire}")
        self._gateways[wire] = ref
        return ref

    async def routes(self, profile: ProviderProfile) -> ActorRef | list[Route]:
        """The session's model: its profile's gateway, then each fallback's."""
        own = await self.gateway(profile)
        others = [name for name in self.settings.fallbacks if name != profile.id]
        if not others:
            return own
        from actors.models.fallback import Route

        routes = [Route(own)]
        for name in others:
            fallback = self.profile(name)
            routes.append(Route(await self.gateway(fallback), model=fallback.model))
        return routes
