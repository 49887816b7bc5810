"""The session's provider options merged into an adapter's body (the rules:
:mod:`protocol.provider_options`)."""

from __future__ import annotations

from typing import Any

from actors.models.errors import ConfigurationError
from protocol.llm import Request
from protocol.provider_options import ProviderOptionError, check_provider_options


def wire_options(request: Request, key: str) -> dict[str, Any]:
    """The options an adapter merges into its body: ``provider_options[key]`` (the
    profile's, keyed by provider or wire), then the session's own over them. A
    session option naming a field Troupe owns is a :class:`ConfigurationError`
    (never retried, never failed over), whoever built the request."""
    options = dict(request.provider_options.get(key, {}))
    if request.wire_options:
        try:
            check_provider_options(request.wire_options)
        except ProviderOptionError as error:
            raise ConfigurationError(str(error)) from None
        options.update(request.wire_options)
    return options
