"""Where a provider endpoint is and how to talk to it, explicitly or from the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

import msgspec

from actors import provider_wires
from actors.models.errors import ConfigurationError
from actors.provider_wires import FactTable, UnknownWire, WireDescriptor

Wire = Literal["openai_responses", "openai_chat", "anthropic", "gemini", "bedrock_converse"]
"""The built-in wires' names (their descriptors: :mod:`actors.provider_wires`; an
installed wire's name works at run time too). ``bedrock_converse``: AWS Bedrock's
Converse API, any Bedrock model (SigV4 or an API key)."""
Platform = Literal["direct", "azure", "vertex", "bedrock", "openrouter"]
"""Who hosts the endpoint: the provider itself, or a platform that serves the same wire
format behind its own URLs and authentication (see :mod:`actors.models.endpoints`)."""

DEFAULT_BASE_URLS: Mapping[str, str] = FactTable(lambda wire: wire.default_base_url)
"""Each wire's base URL (read from its descriptor; kept for importers)."""


def descriptor(name: str) -> WireDescriptor:
    """The descriptor of the wire ``name`` names in any spelling
    (:mod:`actors.provider_wires`); an unknown one is a :class:`ConfigurationError`
    listing the known ones."""
    try:
        return provider_wires.descriptor(name)
    except UnknownWire as error:
        raise ConfigurationError(str(error)) from None


def wire_name(name: str) -> Wire:
    """The model layer's name for ``name`` in any of its spellings; an unknown one
    is a :class:`ConfigurationError` listing the known ones."""
    return descriptor(name).name  # type: ignore[return-value]


class Timeouts(msgspec.Struct, frozen=True):
    """The spec's adapter timeouts: ``stream_read`` bounds the gap between two reads."""

    connect: float = 10.0
    request: float = 120.0
    stream_read: float = 30.0


class Endpoint(msgspec.Struct, frozen=True):
    """One provider endpoint: its wire format, base URL (ending in the API version,
    e.g. ``.../v1`` or ``.../v1beta``), key, and the gateway's limits for it.

    A base URL without a version path gets the provider's default one appended, so
    ``OPENAI_BASE_URL=http://localhost:11434`` and ``.../v1`` both work.
    """

    wire: Wire
    base_url: str
    api_key: str = ""
    headers: dict[str, str] = {}
    max_concurrency: int = 16
    timeouts: Timeouts = Timeouts()
    organization: str | None = None
    project: str | None = None
    platform: Platform = "direct"
    platform_options: dict[str, str] = {}
    """Settings of the hosting platform (api_version, region, credentials_file, ...)."""

    @property
    def name(self) -> str:
        return f"{self.wire}@{self.base_url}"


def normalise_base_url(wire: str, base_url: str) -> str:
    url = base_url.rstrip("/")
    version = descriptor(wire).version_path
    if not version:
        return url  # the wire's paths carry no version (Bedrock's)
    tail = url.rsplit("/", 1)[-1]
    if tail.startswith("v1") or tail.startswith("v2"):
        return url
    return url + version


def endpoint_from_env(
    wire: str,
    environ: Mapping[str, str] | None = None,
    **overrides: object,
) -> Endpoint:
    """An endpoint configured from the spec's variables (``OPENAI_API_KEY``, ...).

    Raises :class:`ConfigurationError` when no key is set, unless a base URL is (local
    OpenAI-compatible servers such as Ollama need no key).
    """
    env = os.environ if environ is None else environ
    described = descriptor(wire)
    wire = described.name
    key_names, url_name = described.key_variables, described.url_variable
    key = next((env[name] for name in key_names if env.get(name)), "")
    base = env.get(url_name) or described.default_base_url
    if not key and not env.get(url_name):
        raise ConfigurationError(f"{wire}: set {' or '.join(key_names)} (or {url_name})")
    fields: dict[str, object] = {
        "wire": wire,
        "base_url": normalise_base_url(wire, base),
        "api_key": key,
    }
    for field, variable in described.endpoint_variables.items():
        fields[field] = env.get(variable) or None
    fields.update(overrides)
    return Endpoint(**fields)  # type: ignore[arg-type]


def endpoint(wire: str, base_url: str | None = None, api_key: str = "", **rest: object) -> Endpoint:
    """An endpoint configured explicitly."""
    described = descriptor(wire)
    wire = described.name
    url = normalise_base_url(wire, base_url or described.default_base_url)
    return Endpoint(wire=wire, base_url=url, api_key=api_key, **rest)  # type: ignore[arg-type]
