"""Finding and reading the argument object of a text tool call.

Models write arguments as JSON, but not always: Python dicts with single quotes
(which models learn from histories rendered with ``str(dict)``), trailing commas,
``True``/``None``. The object's end is found by counting braces outside quoted
strings (single and double quotes, with escapes), then the text is read as JSON,
and failing that as a Python literal with ``ast.literal_eval`` (never ``eval``:
it evaluates no names, calls or operators).
"""

from __future__ import annotations

import ast
import json
from typing import Any


class ArgumentsError(ValueError):
    """Arguments that are not an object; the message tells the model what to fix."""


def object_end(text: str, start: int) -> int | None:
    """The index just past the object opening at ``text[start] == "{"``, or None
    when the text ends first (a truncated call)."""
    depth = 0
    quote: str | None = None
    index = start
    length = len(text)
    while index < length:
        char = text[index]
        if quote is not None:
            if char == "\\":
                index += 2
                continue
            if char == quote:
                quote = None
        elif char in ("'", '"'):
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return None


def load_object(raw: str) -> dict[str, Any]:
    """``raw`` read as a JSON object, or as a Python literal dict."""
    try:
        value = json.loads(raw)
    except ValueError as json_error:
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise ArgumentsError(f"arguments are not valid JSON ({json_error})") from None
    if not isinstance(value, dict):
        raise ArgumentsError(f"arguments must be a JSON object, got {type(value).__name__}")
    if not all(isinstance(key, str) for key in value):
        raise ArgumentsError("argument names must be strings")
    return value


def first_object(text: str) -> tuple[dict[str, Any] | None, str | None, int]:
    """The first object in ``text``: (arguments, error, end index)."""
    start = text.find("{")
    if start < 0:
        return None, "no JSON object found", len(text)
    end = object_end(text, start)
    if end is None:
        return None, "the JSON object is not closed (truncated call?)", len(text)
    try:
        return load_object(text[start:end]), None, end
    except ArgumentsError as exc:
        return None, str(exc), end
