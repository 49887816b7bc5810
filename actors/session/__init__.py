"""The session actor: the agentic loop of coding-agent-loop-spec §2, its provider
profiles (§3) and system prompts (§6).

What a user embedding sessions needs is importable from here: ``SessionActor``,
the profiles (``openai_profile``, ``anthropic_profile``, ``gemini_profile``), and
the messages a session answers (``Submit``, ``Steer``, ``Subscribe`` ...). They are
imported on first use, so ``import actors.session`` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from actors.session.actor import SessionActor
    from actors.session.profiles import (
        ProviderProfile,
        anthropic_profile,
        gemini_profile,
        openai_profile,
    )
    from protocol.session import (
        Abort,
        FollowUp,
        Interrupt,
        SessionConfig,
        Steer,
        Submit,
        Subscribe,
        UpdateConfig,
    )

_WHERE = {
    "SessionActor": "actors.session.actor",
    "ProviderProfile": "actors.session.profiles",
    "anthropic_profile": "actors.session.profiles",
    "gemini_profile": "actors.session.profiles",
    "openai_profile": "actors.session.profiles",
    **dict.fromkeys(
        (
            "Abort",
            "FollowUp",
            "Interrupt",
            "SessionConfig",
            "Steer",
            "Submit",
            "Subscribe",
            "UpdateConfig",
        ),
        "protocol.session",
    ),
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'actors.session' has no attribute {name!r}")
    return getattr(import_module(module), name)


__all__ = [
    "Abort", "FollowUp", "Interrupt", "ProviderProfile", "SessionActor", "SessionConfig",
    "Steer", "Submit", "Subscribe", "UpdateConfig", "anthropic_profile", "gemini_profile",
    "openai_profile",
]  # fmt: skip
