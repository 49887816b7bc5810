"""The text-calling protocol as the model sees it: how tools are described in the
system prompt, and how calls and results are written back into the history.

History is always rendered as valid JSON (``json.dumps``), never ``str(dict)``:
a model imitates what it sees, and single-quoted dicts in the history teach it to
write calls that JSON cannot read (adr-040's addendum).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from protocol.llm import ToolDefinition

INSTRUCTIONS = """\
# Tools
You can call tools. To call one, write exactly this, with a JSON object inside:

<tool_call>
{"name": "TOOL_NAME", "arguments": {"PARAMETER": "VALUE"}}
</tool_call>

Use double quotes (JSON, not Python). You may write reasoning before the call.
Stop after your tool calls: the results come back in <tool_result> blocks.
When you are done, answer without a tool call.

Available tools:
"""


def tools_prompt(definitions: Sequence[ToolDefinition]) -> str:
    """The system prompt section describing the tools and the call format."""
    lines = [INSTRUCTIONS]
    for definition in definitions:
        schema = json.dumps(definition.parameters, separators=(",", ":"), sort_keys=True)
        lines.append(f"- {definition.name}: {definition.description}\n  parameters: {schema}")
    return "\n".join(lines)


def render_call(name: str, arguments: dict[str, Any]) -> str:
    """A call as the assistant's history shows it (valid JSON, always)."""
    payload = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"<tool_call>\n{payload}\n</tool_call>"


def render_result(name: str, content: str, is_error: bool) -> str:
    """A result as the next user turn shows it."""
    status = ' status="error"' if is_error else ""
    return f'<tool_result name="{name}"{status}>\n{content}\n</tool_result>'
