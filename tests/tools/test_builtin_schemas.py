"""The built-in tools' parameter schemas are made ahead of time (issue 36): the
table a run reads must be what msgspec makes from the Structs today."""

from __future__ import annotations

import msgspec

from actors.tools.builtin import BUILTIN_TOOLS
from actors.tools.builtin_schemas import SCHEMAS
from actors.tools.schema import made_schema, schema_of
from actors.tools.schema_table import builtin_schema_table


def test_the_shipped_table_is_what_the_structs_make() -> None:
    assert dict(SCHEMAS) == builtin_schema_table(), (
        "a built-in tool's parameters changed: run `python -m actors.tools.schema_table`"
    )


def test_every_builtin_tool_is_answered_from_the_table_with_the_made_schema() -> None:
    for tool in BUILTIN_TOOLS.values():
        assert tool.parameters is not None
        key = f"{tool.parameters.__module__}:{tool.parameters.__qualname__}"
        assert key in SCHEMAS
        assert schema_of(tool.parameters) == made_schema(tool.parameters)
        assert tool.definition().parameters == made_schema(tool.parameters)


def test_a_struct_outside_the_table_gets_its_schema_made() -> None:
    class Params(msgspec.Struct):
        """Mine."""

        path: str

    schema = schema_of(Params)
    assert schema["properties"] == {"path": {"type": "string"}}
    assert schema["required"] == ["path"]


def test_each_caller_gets_its_own_copy() -> None:
    tool = BUILTIN_TOOLS["read_file"]
    assert tool.parameters is not None
    first = schema_of(tool.parameters)
    first["properties"].clear()
    assert schema_of(tool.parameters)["properties"]
