"""Active tools for the high-level functions (unified-llm-spec §5): definitions with an
``execute`` handler, every failure sent back to the model as an error result rather
than raised. How one call runs is here; the round around it (all of a round's calls
at once, results in call order) is the tool-round engine's (:mod:`actors.rounds`).

Parameters are a JSON Schema, or a msgspec Struct (the project's way: one definition
gives the schema and the validation). Handlers may be async or plain functions; plain
ones run in a worker thread so a slow one does not block the event loop.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import msgspec
import trio

from actors.models.client.errors import InvalidToolCallError
from actors.models.errors import ConfigurationError
from protocol.llm import ToolCall, ToolDefinition, ToolResult

NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]{0,63}$")
INJECTED = ("messages", "tool_call_id", "abort_signal")
"""Handler parameters filled by the library, not the model (§5.2 context injection)."""

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


class Tool(msgspec.Struct, frozen=True):
    """A tool; with ``execute`` it is active (run by ``generate``), without, passive."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = msgspec.field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    execute: Callable[..., Any] | None = None
    arguments_type: Any = None
    """A msgspec Struct the arguments are converted to (``Tool.from_struct``)."""

    def __post_init__(self) -> None:
        if not NAME.match(self.name):
            raise ConfigurationError(
                f"tool name {self.name!r}: letters, digits and _, starting with a letter, "
                "at most 64 characters"
            )
        if self.parameters.get("type") != "object":
            raise ConfigurationError(f"tool {self.name}: the parameters' root must be an object")

    @classmethod
    def from_struct(
        cls,
        name: str,
        arguments_type: type[msgspec.Struct],
        execute: Callable[..., Any] | None = None,
        description: str = "",
    ) -> Tool:
        schema = msgspec.json.schema(arguments_type)
        refs = schema.pop("$defs", {})
        root = refs.get(arguments_type.__name__, schema) if "$ref" in schema else schema
        if refs and "$ref" in schema:
            root = {**root, "$defs": refs} if len(refs) > 1 else root
        description = description or (arguments_type.__doc__ or "").strip()
        return cls(name, description, root, execute, arguments_type)

    def definition(self) -> ToolDefinition:
        return ToolDefinition(self.name, self.description, self.parameters)


def validate_arguments(tool: Tool, call: ToolCall) -> Any:
    """The arguments to pass to the handler; :class:`InvalidToolCallError` if they do
    not parse or do not fit the schema (required keys and their JSON types)."""
    if call.arguments_error:
        raise InvalidToolCallError(call.arguments_error)
    if tool.arguments_type is not None:
        try:
            return msgspec.convert(call.arguments, tool.arguments_type)
        except msgspec.ValidationError as error:
            raise InvalidToolCallError(f"invalid arguments for {tool.name}: {error}") from None
    properties = tool.parameters.get("properties") or {}
    missing = [key for key in tool.parameters.get("required") or () if key not in call.arguments]
    if missing:
        raise InvalidToolCallError(f"{tool.name}: missing required argument(s) {missing}")
    for key, value in call.arguments.items():
        kind = (properties.get(key) or {}).get("type")
        kinds = kind if isinstance(kind, list) else [kind] if kind else []
        allowed = tuple(t for k in kinds for t in _JSON_TYPES.get(k, ()))
        bad_bool = isinstance(value, bool) and bool not in allowed
        if allowed and (not isinstance(value, allowed) or bad_bool):
            raise InvalidToolCallError(f"{tool.name}: argument {key!r} should be {kind}")
    return call.arguments


def _call_handler(tool: Tool, arguments: Any, context: dict[str, Any]) -> Any:
    assert tool.execute is not None
    wanted = inspect.signature(tool.execute).parameters
    extra = {name: value for name, value in context.items() if name in wanted}
    if isinstance(arguments, msgspec.Struct):
        return tool.execute(arguments, **extra)
    return tool.execute(**arguments, **extra)


async def run_tool(tool: Tool | None, call: ToolCall, context: dict[str, Any]) -> ToolResult:
    """One call's result; an unknown tool, bad arguments or a raising handler become
    an error result the model can read and recover from."""
    if tool is None or tool.execute is None:
        return ToolResult(call.id, f"Unknown tool: {call.name}", True, call.name)
    try:
        arguments = validate_arguments(tool, call)
        context = {**context, "tool_call_id": call.id}
        if inspect.iscoroutinefunction(tool.execute):
            value = await _call_handler(tool, arguments, context)
        else:
            value = await trio.to_thread.run_sync(_call_handler, tool, arguments, context)
            if inspect.isawaitable(value):
                value = await value
    except Exception as error:
        return ToolResult(call.id, f"{type(error).__name__}: {error}", True, call.name)
    if not isinstance(value, str | dict | list):
        value = msgspec.to_builtins(value) if value is not None else ""
        if not isinstance(value, str | dict | list):
            value = str(value)
    return ToolResult(call.id, value, False, call.name)
