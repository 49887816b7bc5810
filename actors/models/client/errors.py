"""The spec's errors that belong to the high-level layer (unified-llm-spec §6.1)."""

from __future__ import annotations

from actors.models.errors import ModelError


class NoObjectGeneratedError(ModelError):
    """``generate_object``: the answer was not JSON, or did not fit the schema."""

    kind = "no_object"
    default_retryable = False


class InvalidToolCallError(ModelError):
    """A tool call whose arguments failed validation (sent to the model as an error)."""

    kind = "invalid_tool_call"
    default_retryable = False


class UnsupportedToolChoiceError(ModelError):
    kind = "unsupported_tool_choice"
    default_retryable = False
