"""Tool parameters: one msgspec Struct gives the JSON Schema and the validation.

The schema sent to the model is inlined (no ``$ref``/``$defs``, which several
providers reject) and carries the Struct's docstring and field descriptions.
Arguments are validated by converting them into the Struct; msgspec's error names
the failing field (``Expected `int`, got `str` - at `$.offset```).

A custom tool may bring a plain JSON Schema instead; its arguments are checked for
required properties and their basic types.
"""

from __future__ import annotations

from typing import Any

import msgspec

from actors.tools.builtin_schemas import SCHEMAS

_MAX_DEPTH = 32


class InvalidArguments(ValueError):
    """The model's arguments do not fit the tool's parameters; the text says where."""


def _inline(node: Any, definitions: dict[str, Any], depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise ValueError("tool parameter schema nests too deeply (recursive type?)")
    if isinstance(node, dict):
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith("#/$defs/"):
            target = definitions[reference.removeprefix("#/$defs/")]
            merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            return _inline(merged, definitions, depth + 1)
        return {
            key: _inline(value, definitions, depth + 1)
            for key, value in node.items()
            if key not in ("title", "$defs")
        }
    if isinstance(node, list):
        return [_inline(item, definitions, depth + 1) for item in node]
    return node


def schema_of(parameters: type[msgspec.Struct]) -> dict[str, Any]:
    """The inlined JSON Schema of a parameters Struct: a built-in tool's is read from
    :mod:`actors.tools.builtin_schemas` (made ahead: msgspec's schema generator was
    about 3% of a one-answer ``troupe run``'s instructions, issue 36); any other's is
    made here."""
    made = SCHEMAS.get(f"{parameters.__module__}:{parameters.__qualname__}")
    if made is not None:
        return msgspec.json.decode(made)  # a fresh dict: the caller may keep it
    return made_schema(parameters)


def made_schema(parameters: type[msgspec.Struct]) -> dict[str, Any]:
    """The inlined JSON Schema of a parameters Struct, made from the Struct."""
    raw = msgspec.json.schema(parameters)
    schema = _inline(raw, raw.get("$defs", {}))
    schema.setdefault("properties", {})
    schema.setdefault("required", [])
    return schema


def parse_arguments(parameters: type[msgspec.Struct], arguments: dict[str, Any]) -> Any:
    """Convert the model's arguments into the Struct, or raise InvalidArguments."""
    try:
        return msgspec.convert(arguments, type=parameters, strict=False)
    except msgspec.ValidationError as exc:
        raise InvalidArguments(str(exc)) from None


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def check_against_schema(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Required properties present, and top-level types right, for a plain schema."""
    for name in schema.get("required", []):
        if name not in arguments:
            raise InvalidArguments(f"Object missing required field `{name}`")
    for name, value in arguments.items():
        declared = schema.get("properties", {}).get(name, {}).get("type")
        if not isinstance(declared, str) or declared not in _JSON_TYPES:
            continue
        wrong_bool = isinstance(value, bool) and declared in ("integer", "number")
        if wrong_bool or not isinstance(value, _JSON_TYPES[declared]):
            raise InvalidArguments(
                f"Expected `{declared}`, got `{type(value).__name__}` - at `$.{name}`"
            )
    return arguments
