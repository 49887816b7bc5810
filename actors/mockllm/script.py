"""Scripts for the mock provider: the turns it answers with and the faults it injects.

A script lists turns; each request takes the next turn (the last one repeats when
``repeat`` is true). A turn is text, reasoning, tool calls and usage, or a fault.
Scripts load from YAML or JSON::

    turns:
      - fault: {status: 429, retry_after: 0.1}
      - reasoning: "Let me think."
        text: "Hello!"
        usage: {input: 12, output: 5, reasoning: 3}
      - tool_calls:
          - {name: read_file, arguments: {path: a.txt}}
          - {name: read_file, arguments: {path: b.txt}}
      - {text: "partial", fault: {error_after: 2}}

``conversations`` script several sessions at once, each by a piece of its first
user message; its turns follow the conversation, not the order requests arrive.

``rounds: N`` answers N tool calls (counted from the tool results in the request,
or the latest round number its calls carry, whichever is higher, so a compacted
conversation goes on where it was) and then text, for benchmarks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec


class ToolCallSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str
    arguments: dict[str, Any] | str = {}
    id: str | None = None


class UsageSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    input: int = 10
    output: int | None = None
    reasoning: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None


class Fault(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What goes wrong. ``status`` answers with an HTTP error; the ``*_after`` faults
    happen after that many stream events (0 = right after the headers)."""

    status: int | None = None
    retry_after: float | None = None
    message: str = "scripted fault"
    error_after: int | None = None
    stall_after: int | None = None
    stall: float | None = None
    """Seconds to stall; None stalls until the client goes away."""
    drop_after: int | None = None
    drop_before_response: bool = False
    headers: dict[str, str] = {}
    """Extra headers on an error answer (``retry-after-ms``, ``x-should-retry``)."""
    wires: list[str] = []
    """Only requests in these wire formats fail (empty: all); the others get the turn's
    answer. One mock then plays a failing endpoint and its fallback."""


class Turn(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    text: str = ""
    reasoning: str = ""
    signature: str | None = None
    tool_calls: list[ToolCallSpec] = []
    usage: UsageSpec = UsageSpec()
    finish: str | None = None
    """"stop" or "length"; tool calls imply "tool_calls"."""
    fault: Fault | None = None
    delay: float = 0.0
    """Seconds before the answer starts (a slow provider)."""
    event_delay: float = 0.0
    """Seconds between two stream events."""


class Conversation(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Turns for the conversations whose first user message contains ``match``.

    Turn N answers the request that already carries N answers of the model, so
    several sessions (a parent and its subagents) can be scripted at once and
    served in any order."""

    match: str
    turns: list[Turn]


class Script(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    turns: list[Turn] = []
    conversations: list[Conversation] = []
    """Checked first, in order; requests that match none fall back to ``turns``."""
    repeat: bool = True
    rounds: int | None = None
    rounds_tool: str = "noop"
    rounds_text: str = "done"
    rounds_arguments: dict[str, Any] = {}
    """More arguments for each rounds call (besides ``round``): a real tool's, such as
    ``read_file``'s ``file_path``, so each round has a real output."""
    context_window: int | None = None
    """Tokens a request may hold (its JSON body's length over four): beyond them the
    mock answers with the wire's real context-overflow error, and each answer reports
    the request's count as its input tokens (see :mod:`.overflow`)."""
    model: str = "mock-model"
    delta_size: int = 16
    """Characters per text, reasoning or argument delta."""
    replay: list[str] = []
    """Recorded response files to serve as they are, one per request, in order."""
    text_rounds: bool = False
    """In rounds mode, answer a request without ``tools`` (a client calling tools in
    text) with the round's call written in the text, ``<tool_call>{...}</tool_call>``."""
    reject_tools: bool = False
    """Answer any request that carries ``tools`` with a 400, as a server without
    native tool calling does (Ollama's plain models, llama.cpp without ``--jinja``)."""


class ScriptError(ValueError):
    """A script file that cannot be used, with the reason."""


def parse_script(data: bytes | str, *, yaml: bool = False) -> Script:
    try:
        if yaml:
            import yaml as pyyaml

            return msgspec.convert(pyyaml.safe_load(data) or {}, Script)
        return msgspec.json.decode(data, type=Script)
    except (msgspec.ValidationError, msgspec.DecodeError) as error:
        raise ScriptError(f"invalid mock-llm script: {error}") from error
    except ImportError as error:  # pragma: no cover - PyYAML is a dependency
        raise ScriptError("YAML scripts need PyYAML") from error
    except Exception as error:  # yaml.YAMLError, without importing yaml at module level
        raise ScriptError(f"invalid mock-llm script: {error}") from error


def load_script(path: str | Path) -> Script:
    path = Path(path)
    return parse_script(path.read_bytes(), yaml=path.suffix in (".yaml", ".yml"))
