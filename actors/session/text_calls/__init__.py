"""Text tool calling: a prompt format, a parser and early detection, for models
and servers without native tool calls."""

from actors.session.text_calls.parser import ParsedText, TextCall, TextCallError, parse_text_calls
from actors.session.text_calls.prompt import render_call, render_result, tools_prompt
from actors.session.text_calls.stream import CallWatch

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
