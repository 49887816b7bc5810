"""Requests checked before they reach an actor.

The decoder already holds every frame to its shape, its nesting limit and 64-bit
integers (:mod:`protocol.wire_limits`); this module holds requests to what the
actors behind the gateway can take: names that are valid address segments, paths
without NUL bytes, limits that are not negative, model names that can be part of a
URL. A request that fails here gets ``invalid_request`` naming the field, and no
actor (an environment, a kind's helper, a session) ever sees it.
"""

from __future__ import annotations

import math
import re
from typing import Any

from actors.kernel import Rejection
from actors.policy.presets import resolve_policy
from protocol.provider_options import ProviderOptionError, check_provider_options
from protocol.session import SessionConfig
from protocol.wire_requests import (
    AddEnvironment,
    AddEnvironmentAlias,
    CreateSession,
    ExecInEnvironment,
    ReadEnvironmentFile,
    Request,
    UpdateSessionConfig,
    WriteEnvironmentFile,
)

MAX_NAME = 64
"""Longest environment name (one segment of ``/environments/<kind>/<name>``)."""
MAX_MODEL_NAME = 200
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]*\Z")
"""Model names as providers spell them (``gpt-4o``, ``llama3.1:8b``,
``hf.co/org/model``, ``models/gemini-2.0-flash``); no space, control character,
``?``, ``#`` or ``%``, so one can always stand in a request URL."""
_EFFORT = re.compile(r"[A-Za-z0-9_-]{1,32}\Z")


class InvalidRequest(Rejection):
    code = "invalid_request"


def validate(request: Request) -> None:
    """Raise :class:`InvalidRequest` if ``request`` may not reach an actor."""
    match request:
        case AddEnvironment() | AddEnvironmentAlias():
            check_name(request.name)
            spec = request.spec if isinstance(request, AddEnvironment) else request.as_add().spec
            for field in spec.__struct_fields__:
                value = getattr(spec, field)
                for index, text in enumerate(value if isinstance(value, list) else [value]):
                    where = f"{field}[{index}]" if isinstance(value, list) else field
                    _text(f"spec.{where}", text if isinstance(text, str) else None)
        case CreateSession():
            _path("working_dir", request.working_dir)
            if request.config is not None:
                check_config(request.config, "config.")
        case UpdateSessionConfig():
            _model(request.model)
            _effort(request.reasoning_effort)
            _not_negative("max_turns", request.max_turns)
            _not_negative("max_tool_rounds_per_input", request.max_tool_rounds_per_input)
            if request.provider_options is not None:
                _provider_options(request.provider_options, "")
        case ExecInEnvironment():
            _path("working_dir", request.working_dir)
            _text("command", request.command)
            _not_negative("timeout_ms", request.timeout_ms)
        case ReadEnvironmentFile():
            _path("path", request.path, required=True)
        case WriteEnvironmentFile():
            _path("path", request.path, required=True)


def check_name(name: str) -> None:
    """One address segment: letters, digits, ``.``, ``_``, ``-``; not first ``.``/``-``."""
    if not (len(name) <= MAX_NAME and _NAME.match(name)):
        raise InvalidRequest(
            f"invalid environment name {name[:MAX_NAME]!r}: use 1 to {MAX_NAME} letters, "
            "digits, '.', '_' or '-', starting with a letter or digit"
        )


def check_config(config: SessionConfig, prefix: str = "") -> None:
    """Settings a session can run with: no negative limit, a usable model name."""
    _model(config.model, f"{prefix}model")
    _effort(config.reasoning_effort, f"{prefix}reasoning_effort")
    for name in config.__struct_fields__:
        value = getattr(config, name)
        if isinstance(value, int) and not isinstance(value, bool):
            _not_negative(prefix + name, value)
        elif isinstance(value, dict) and name not in ("policy_overrides", "provider_options"):
            for key, limit in value.items():
                _not_negative(f"{prefix}{name}.{key}", limit)
    try:
        resolve_policy(config.policy, config.policy_overrides)
    except ValueError as error:  # an unknown preset, or overrides that do not fit
        raise InvalidRequest(f"{prefix}policy: {error}") from None
    _provider_options(config.provider_options, prefix)
    ratio = config.context_warning_ratio
    if not (math.isfinite(ratio) and ratio >= 0):
        raise InvalidRequest(f"{prefix}context_warning_ratio must be a number, 0 or more")


def _provider_options(options: dict[str, Any], prefix: str) -> None:
    try:
        check_provider_options(options)
    except ProviderOptionError as error:
        raise InvalidRequest(f"{prefix}provider_options: {error}") from None


def _not_negative(field: str, value: Any) -> None:
    if value is not None and value < 0:
        raise InvalidRequest(f"{field} cannot be negative (got {value})")


def _text(field: str, value: str | None, required: bool = False) -> None:
    if value is None:
        return
    if required and not value.strip():
        raise InvalidRequest(f"{field} cannot be empty")
    if "\x00" in value:
        raise InvalidRequest(f"{field} contains a NUL byte")


def _path(field: str, value: str | None, required: bool = False) -> None:
    _text(field, value, required)


def _model(value: str | None, field: str = "model") -> None:
    if value is None:
        return
    if not (len(value) <= MAX_MODEL_NAME and _MODEL.match(value)):
        raise InvalidRequest(
            f"{field} {value[:MAX_MODEL_NAME]!r} is not a model name: use letters, digits "
            "and . _ : / @ + -, starting with a letter or digit"
        )


def _effort(value: str | None, field: str = "reasoning_effort") -> None:
    if value is not None and not _EFFORT.match(value):
        raise InvalidRequest(f"{field} {value[:32]!r} is not a reasoning effort (e.g. 'high')")
