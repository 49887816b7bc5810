"""``troupe mock-llm``: a scripted provider that speaks all four wire formats.

For tests (``async with serve_mock_llm(script) as server``), benchmarks (rounds
mode) and demos (``troupe mock-llm --script demo.yaml``). See :mod:`.script` for
the script format and :mod:`.replay` for serving recorded streams.
"""

from actors.mockllm.replay import Reply, load_replies
from actors.mockllm.script import (
    Conversation,
    Fault,
    Script,
    ScriptError,
    ToolCallSpec,
    Turn,
    UsageSpec,
    load_script,
    parse_script,
)
from actors.mockllm.server import MockLLMServer, RecordedRequest, serve_mock_llm

__all__ = [
    "Conversation",
    "Fault",
    "MockLLMServer",
    "RecordedRequest",
    "Reply",
    "Script",
    "ScriptError",
    "ToolCallSpec",
    "Turn",
    "UsageSpec",
    "load_replies",
    "load_script",
    "parse_script",
    "serve_mock_llm",
]
