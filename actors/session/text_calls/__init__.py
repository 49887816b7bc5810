"""Text tool calling: a prompt format, a parser and early detection, for models
and servers without native tool calls.

The names are imported from their modules when first asked for: every session
imports :class:`CallWatch` (a native-call session streams through it too), while
the parser compiles a dozen patterns that only a text-calling model needs (issue
36: an embedded run starts with what it uses)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from actors.session.text_calls.parser import (
        ParsedText,
        TextCall,
        TextCallError,
        parse_text_calls,
    )
    from actors.session.text_calls.prompt import render_call, render_result, tools_prompt
    from actors.session.text_calls.stream import CallWatch

_MODULE_OF = {
    "CallWatch": "stream",
    "ParsedText": "parser",
    "TextCall": "parser",
    "TextCallError": "parser",
    "parse_text_calls": "parser",
    "render_call": "prompt",
    "render_result": "prompt",
    "tools_prompt": "prompt",
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "CallWatch",
    "ParsedText",
    "TextCall",
    "TextCallError",
    "parse_text_calls",
    "render_call",
    "render_result",
    "tools_prompt",
]
