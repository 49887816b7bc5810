"""Where a provider endpoint is and how to talk to it, explicitly or from the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

import msgspec

from actors.models.errors import ConfigurationError

Wire = Literal["openai_responses", "openai_chat", "anthropic", "gemini", "bedrock_converse"]
"""``bedrock_converse``: AWS Bedrock's Converse API, any Bedrock model (SigV4 or an API key)."""
Platform = Literal["direct", "azure", "vertex", "bedrock", "openrouter"]
"""Who hosts the endpoint: the provider itself, or a platform that serves the same wire
format behind its own URLs and authentication (see :mod:`actors.models.endpoints`)."""

DEFAULT_BASE_URLS: dict[str, str] = {
    "openai_responses": "https://api.openai.com/v1",
    "openai_chat": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com/v1",
    "gemini": "https://generativelanguage.googleapis.com/v1beta",
    "bedrock_converse": "https://bedrock-runtime.us-east-1.amazonaws.com",
}

WIRE_NAMES: dict[str, Wire] = {
    "openai": "openai_responses",
    "openai_responses": "openai_responses",
    "openai_chat": "openai_chat",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "bedrock_converse": "bedrock_converse",
}
"""Every spelling of a wire format, dashes read as underscores: the command line's
(``openai-chat``) and the library's (``openai_chat``) name the same one."""


def wire_name(name: str) -> Wire:
    """The model layer's name for ``name`` in any of its spellings; an unknown one
    is a :class:`ConfigurationError` listing the known ones."""
    wire = WIRE_NAMES.get(str(name).strip().lower().replace("-", "_"))
    if wire is None:
        known = "openai (= openai-responses), openai-chat, anthropic, gemini, bedrock-converse"
        raise ConfigurationError(f"unknown wire {name!r}; known: {known}")
    return wire


_ENV: dict[str, tuple[tuple[str, ...], str]] = {
    "openai_responses": (("OPENAI_API_KEY",), "OPENAI_BASE_URL"),
    "openai_chat": (("OPENAI_API_KEY",), "OPENAI_BASE_URL"),
    "anthropic": (("ANTHROPIC_API_KEY",), "ANTHROPIC_BASE_URL"),
    "gemini": (("GEMINI_API_KEY", "GOOGLE_API_KEY"), "GEMINI_BASE_URL"),
    "bedrock_converse": (("AWS_BEARER_TOKEN_BEDROCK",), "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"),
}


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


def normalise_base_url(wire: Wire, base_url: str) -> str:
    url = base_url.rstrip("/")
    if wire == "bedrock_converse":
        return url  # Bedrock's paths carry no version
    tail = url.rsplit("/", 1)[-1]
    if tail.startswith("v1") or tail.startswith("v2"):
        return url
    return url + ("/v1beta" if wire == "gemini" else "/v1")


def endpoint_from_env(
    wire: Wire,
    environ: Mapping[str, str] | None = None,
    **overrides: object,
) -> Endpoint:
    """An endpoint configured from the spec's variables (``OPENAI_API_KEY``, ...).

    Raises :class:`ConfigurationError` when no key is set, unless a base URL is (local
    OpenAI-compatible servers such as Ollama need no key).
    """
    env = os.environ if environ is None else environ
    wire = wire_name(wire)
    key_names, url_name = _ENV[wire]
    key = next((env[name] for name in key_names if env.get(name)), "")
    base = env.get(url_name) or DEFAULT_BASE_URLS[wire]
    if not key and not env.get(url_name):
        raise ConfigurationError(f"{wire}: set {' or '.join(key_names)} (or {url_name})")
    fields: dict[str, object] = {
        "wire": wire,
        "base_url": normalise_base_url(wire, base),
        "api_key": key,
    }
    if wire.startswith("openai"):
        fields["organization"] = env.get("OPENAI_ORG_ID") or None
        fields["project"] = env.get("OPENAI_PROJECT_ID") or None
    fields.update(overrides)
    return Endpoint(**fields)  # type: ignore[arg-type]


def endpoint(
    wire: Wire, base_url: str | None = None, api_key: str = "", **rest: object
) -> Endpoint:
    """An endpoint configured explicitly."""
    wire = wire_name(wire)
    url = normalise_base_url(wire, base_url or DEFAULT_BASE_URLS[wire])
    return Endpoint(wire=wire, base_url=url, api_key=api_key, **rest)  # type: ignore[arg-type]
