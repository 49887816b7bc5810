"""A session's provider options: fields added to the request body on whichever
wire the session talks (coding-agent-loop-spec 2.2 ``provider_options``).

They come from ``--provider-option key=value`` (repeatable), a config file's
``[provider_options]`` table or ``SessionConfig.provider_options`` over the
protocol, and are merged last into each request body, so a field a provider has
and Troupe does not know (``service_tier``, ``safetySettings``, a proxy's own)
reaches it. The fields that carry the conversation itself stay Troupe's: an
option naming one is refused with :class:`ProviderOptionError` before anything is
sent, since a silently replaced model, history or tool list would make the
session's record lie about what the model saw.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

OWNED_FIELDS = frozenset(
    {
        "model",
        "messages",
        "contents",
        "input",
        "tools",
        "stream",
        "system",
        "systemInstruction",
        "instructions",
    }
)
"""Request body fields Troupe fills itself on some wire: the model, the history
(``messages``, Gemini's ``contents``, Responses' ``input``), the system prompt
(each wire's spelling), the tools and streaming."""


class ProviderOptionError(ValueError):
    """A provider option that cannot be used: malformed, or naming a field Troupe owns."""


def check_provider_options(options: Mapping[str, Any]) -> None:
    """Raise :class:`ProviderOptionError` when ``options`` would replace a field
    Troupe owns (or has a key that is no body field at all)."""
    for key in options:
        if not key.strip():
            raise ProviderOptionError("provider option names cannot be empty")
        if key in OWNED_FIELDS:
            owned = ", ".join(sorted(OWNED_FIELDS))
            raise ProviderOptionError(
                f"provider option {key!r} is a field Troupe sets itself ({owned})"
            )


def parse_provider_options(given: Iterable[str]) -> dict[str, Any]:
    """``KEY=VALUE`` strings as options: a value that parses as JSON is that
    (``true``, ``3``, ``{"a": 1}``), any other is the string itself."""
    options: dict[str, Any] = {}
    for text in given:
        key, equals, raw = text.partition("=")
        key = key.strip()
        if not equals or not key:
            raise ProviderOptionError(f"--provider-option {text!r}: expected KEY=VALUE")
        try:
            options[key] = json.loads(raw)
        except ValueError:
            options[key] = raw
    check_provider_options(options)
    return options
