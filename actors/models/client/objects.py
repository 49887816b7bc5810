"""``generate_object()`` (unified-llm-spec §4.5): structured output, validated by msgspec.

The schema is a msgspec Struct type (validated by msgspec itself) or a JSON Schema
dict, which is turned into msgspec types for the subset that maps cleanly (objects
with required and optional properties, arrays, enums, the scalar types, nullable
unions); anything outside that subset is accepted as it comes rather than guessed at.
OpenAI and Gemini get their native JSON-schema output; Anthropic is asked to call a
tool whose input schema is the schema (the spec's tool-based extraction).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from actors.models.client.client import Client, default_client
from actors.models.client.errors import NoObjectGeneratedError
from actors.models.client.generate import GenerateResult, generate
from actors.models.client.tools import Tool
from actors.models.config import descriptor
from protocol.llm import Message, ResponseFormat, ToolChoice

OUTPUT_TOOL = "json_output"
_SCALARS: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "null": type(None),
}


def schema_type(schema: dict[str, Any], names: itertools.count[int] | None = None) -> Any:
    """A msgspec type that validates what ``schema`` describes (see the module doc)."""
    names = names or itertools.count(1)
    if schema.get("enum"):
        return Literal[tuple(schema["enum"])]
    kind = schema.get("type")
    if isinstance(kind, list):
        members = [schema_type({**schema, "type": k}, names) for k in kind]
        union = members[0]
        for member in members[1:]:
            union = union | member
        return union
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "array":
        items = schema.get("items")
        return list[schema_type(items, names)] if isinstance(items, dict) else list  # type: ignore[misc]
    if kind == "object" and isinstance(schema.get("properties"), dict):
        required = set(schema.get("required") or ())
        fields: list[Any] = []
        for name, sub in schema["properties"].items():
            sub_type = schema_type(sub, names) if isinstance(sub, dict) else Any
            if name in required:
                fields.append((name, sub_type))
            else:
                fields.append((name, sub_type | None, None))
        fields.sort(key=len)  # required fields (no default) first
        forbid = schema.get("additionalProperties") is False
        return msgspec.defstruct(
            f"Schema{next(names)}", fields, forbid_unknown_fields=forbid, frozen=True
        )
    if kind == "object":
        return dict
    return Any


def json_schema_of(schema: dict[str, Any] | type) -> dict[str, Any]:
    if isinstance(schema, dict):
        return schema
    found = msgspec.json.schema(schema)
    defs = found.pop("$defs", {})
    if "$ref" in found:
        root = dict(defs[found["$ref"].rsplit("/", 1)[1]])
        if len(defs) > 1:
            root["$defs"] = defs
        return root
    return found


def validate_output(text: str, schema: dict[str, Any] | type) -> Any:
    """The parsed, validated object; :class:`NoObjectGeneratedError` otherwise."""
    text = text.strip()
    if text.startswith("```"):  # a model that fenced its JSON anyway
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError as error:
        raise NoObjectGeneratedError(f"the answer is not JSON: {error}: {text[:200]!r}") from None
    target = schema_type(schema) if isinstance(schema, dict) else schema
    try:
        converted = msgspec.convert(value, target)
    except msgspec.ValidationError as error:
        raise NoObjectGeneratedError(f"the answer does not fit the schema: {error}") from None
    if isinstance(schema, dict) and isinstance(converted, msgspec.Struct):
        return value  # a dict schema gets a plain dict back, validated
    return converted


async def generate_object(
    model: str,
    prompt: str | None = None,
    *,
    schema: dict[str, Any] | type,
    messages: Sequence[Message] | None = None,
    system: str | None = None,
    provider: str | None = None,
    client: Client | None = None,
    strict: bool = True,
    **options: Any,
) -> GenerateResult:
    """``result.output`` is the validated object. Validation failures are not retried."""
    client = client or await default_client()
    json_schema = json_schema_of(schema)
    if descriptor(client.wire_of(provider)).structured_output == "output_tool":
        tool = Tool(OUTPUT_TOOL, "Return the answer as this tool's input.", json_schema)
        result = await generate(
            model,
            prompt,
            messages=messages,
            system=system,
            tools=[tool],
            tool_choice=ToolChoice("named", OUTPUT_TOOL),
            max_tool_rounds=0,
            provider=provider,
            client=client,
            **options,
        )
        calls = [call for call in result.tool_calls if call.name == OUTPUT_TOOL]
        if not calls:
            raise NoObjectGeneratedError(f"the model did not call {OUTPUT_TOOL}: {result.text!r}")
        text = calls[0].raw_arguments or msgspec.json.encode(calls[0].arguments).decode()
    else:
        fmt = ResponseFormat("json_schema", json_schema, strict)
        result = await generate(
            model,
            prompt,
            messages=messages,
            system=system,
            response_format=fmt,
            provider=provider,
            client=client,
            **options,
        )
        text = result.text
    return msgspec.structs.replace(result, output=validate_output(text, schema))
