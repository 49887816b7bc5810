"""Writes :mod:`actors.tools.builtin_schemas`, the built-in tools' parameter
schemas made ahead of time (``python -m actors.tools.schema_table``); its test
compares the shipped table with :func:`builtin_schema_table`. Not imported by a
run: only the table is."""

from __future__ import annotations

from pathlib import Path

import msgspec

from actors.tools.builtin import BUILTIN_TOOLS
from actors.tools.schema import made_schema


def builtin_schema_table() -> dict[str, bytes]:
    """What :mod:`actors.tools.builtin_schemas` holds: every built-in tool's
    parameters, by ``module:qualname``, as compact JSON."""
    table: dict[str, bytes] = {}
    for tool in BUILTIN_TOOLS.values():
        if tool.parameters is not None:
            key = f"{tool.parameters.__module__}:{tool.parameters.__qualname__}"
            table[key] = msgspec.json.encode(made_schema(tool.parameters))
    return dict(sorted(table.items()))


def write_builtin_schemas() -> None:
    """Write :mod:`actors.tools.builtin_schemas` again (``python -m actors.tools.schema_table``)."""
    lines = [f'        "{key}": {value!r},' for key, value in builtin_schema_table().items()]
    path = Path(__file__).with_name("builtin_schemas.py")
    path.write_text(_HEADER + "\n".join(lines) + "\n    }\n)\n")


_HEADER = '''# ruff: noqa: E501
"""The JSON Schemas of the built-in tools' parameters, made ahead of time: written by
``python -m actors.tools.schema_table`` (:func:`actors.tools.schema_table.write_builtin_schemas`),
never by hand; ``tests/tools/test_builtin_schemas.py`` fails when a parameters Struct
changed and this table did not."""

from collections.abc import Mapping
from types import MappingProxyType

SCHEMAS: Mapping[str, bytes] = MappingProxyType(
    {
'''


if __name__ == "__main__":
    write_builtin_schemas()
