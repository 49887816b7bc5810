"""The tool registry: schemas from Structs, validation, error results, rounds."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
import trio
import trio.testing

from actors.session.tool_round import run_in_order
from actors.tools.registry import Tool, ToolRegistry
from protocol.llm import ToolCall


class Nested(msgspec.Struct, frozen=True):
    flag: bool = False


class ReadParams(msgspec.Struct, frozen=True):
    """Read a file."""

    file_path: Annotated[str, msgspec.Meta(description="absolute path")]
    offset: int | None = None
    options: Nested | None = None


async def echo(arguments: Any, context: Any) -> str:
    return f"{arguments.file_path}:{arguments.offset}"


async def explode(arguments: Any, context: Any) -> str:
    raise OSError("disk unplugged")


def test_schema_is_inlined_and_described() -> None:
    definition = Tool("read_file", "Read a file.", echo, ReadParams).definition()
    schema = definition.parameters
    assert "$ref" not in str(schema) and "$defs" not in schema
    assert schema["type"] == "object"
    assert schema["required"] == ["file_path"]
    assert schema["properties"]["file_path"] == {"type": "string", "description": "absolute path"}
    nested = schema["properties"]["options"]["anyOf"][0]
    assert nested["properties"]["flag"]["type"] == "boolean"


async def test_arguments_are_validated_and_the_error_names_the_field() -> None:
    registry = ToolRegistry([Tool("read_file", "", echo, ReadParams)])
    ok = await registry.run(ToolCall("c1", "read_file", {"file_path": "/a", "offset": 3}), None)
    assert (ok.output, ok.is_error) == ("/a:3", False)
    wrong = await registry.run(ToolCall("c2", "read_file", {"file_path": "/a", "offset": []}), None)
    assert wrong.is_error and "$.offset" in wrong.output
    missing = await registry.run(ToolCall("c3", "read_file", {}), None)
    assert missing.is_error and "file_path" in missing.output


async def test_unknown_tool_bad_json_and_exceptions_become_error_results() -> None:
    registry = ToolRegistry([Tool("boom", "", explode, ReadParams)])
    unknown = await registry.run(ToolCall("c1", "nope", {}), None)
    assert unknown.is_error and unknown.output.startswith("Unknown tool: nope")
    garbled = ToolCall("c2", "boom", {}, raw_arguments="{oops", arguments_error="invalid JSON")
    assert (await registry.run(garbled, None)).output == "Invalid arguments for boom: invalid JSON"
    failed = await registry.run(ToolCall("c3", "boom", {"file_path": "/x"}), None)
    assert (failed.output, failed.is_error) == ("Tool error (boom): disk unplugged", True)


async def test_plain_json_schema_tools_are_checked_too() -> None:
    schema = {
        "type": "object",
        "properties": {"count": {"type": "integer"}},
        "required": ["count"],
    }

    async def count(arguments: Any, context: Any) -> str:
        return str(arguments["count"] * 2)

    registry = ToolRegistry([Tool("double", "", count, json_schema=schema)])
    assert (await registry.run(ToolCall("c", "double", {"count": 21}), None)).output == "42"
    bad = await registry.run(ToolCall("c", "double", {"count": "21"}), None)
    assert bad.is_error and "$.count" in bad.output
    assert (await registry.run(ToolCall("c", "double", {}), None)).is_error


def test_latest_registration_wins() -> None:
    registry = ToolRegistry([Tool("t", "first", echo, ReadParams)])
    registry.register(Tool("t", "second", echo, ReadParams))
    assert [d.description for d in registry.definitions()] == ["second"]


async def test_a_parallel_round_runs_concurrently_and_keeps_call_order() -> None:
    gates = {name: trio.Event() for name in ("a", "b", "c")}
    started: list[str] = []

    async def wait_gate(arguments: Any, context: Any) -> str:
        started.append(arguments.file_path)
        await gates[arguments.file_path].wait()
        return arguments.file_path.upper()

    registry = ToolRegistry([Tool("gate", "", wait_gate, ReadParams)])
    calls = [ToolCall(f"c-{n}", "gate", {"file_path": n}) for n in ("a", "b", "c")]
    outcomes: list[Any] = []

    async def run() -> None:
        outcomes.extend(
            await run_in_order(calls, lambda call: registry.run(call, None), parallel=True)
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        await trio.testing.wait_all_tasks_blocked()
        assert sorted(started) == ["a", "b", "c"], "all three run at once"
        for name in ("c", "b", "a"):
            gates[name].set()
    assert [(o.call_id, o.output) for o in outcomes] == [("c-a", "A"), ("c-b", "B"), ("c-c", "C")]
