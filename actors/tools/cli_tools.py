"""Structured CLI tools declared in YAML (agent-loop-and-tool-system.md 6.3).

``~/.config/troupe/tools.yaml`` and a project's ``.troupe/tools.yaml`` declare
tools as a program plus an argument template: ``cmd: kubectl``, ``args: ["get",
"{{resource}}"]``, ``optional_args`` added only when their parameter is given, and
``parameters`` with ``type``, ``enum``, ``pattern``, ``maxLength`` and
``optional``, and ``path: true`` for a parameter that names a file or directory
(the policy resolves and judges it like a file tool's path, and the program gets
the resolved path; nothing is guessed from a parameter's name). Every value is
validated before it is interpolated, and each lands
in its own argument: the command runs as an argument vector, never through a
shell, so ``pods; rm -rf ~`` is one (rejected) word, not two commands.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from actors.policy.categories import Category
from actors.tools.tool import ToolKind

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


class CliToolError(ValueError):
    """A tools file that cannot be used; the message names the file and the tool."""


class ParameterSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    type: Literal["string", "integer", "number", "boolean"] = "string"
    description: str = ""
    enum: list[str | int | float] | None = None
    pattern: str | None = None
    maxLength: int | None = None
    optional: bool = False
    path: bool = False
    """The value is a path: resolved and judged by the policy before the tool runs."""


class CliToolSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str
    cmd: str
    description: str = ""
    category: Category = "write"
    kind: ToolKind = "other"
    """How an editor shows its calls (ACP's kinds: read, edit, search, execute ...)."""
    args: list[str] = msgspec.field(default_factory=list)
    optional_args: dict[str, list[str]] = msgspec.field(default_factory=dict)
    parameters: dict[str, ParameterSpec] = msgspec.field(default_factory=dict)
    env: dict[str, str] = msgspec.field(default_factory=dict)
    timeout_ms: int | None = None


class _ToolsFile(msgspec.Struct, frozen=True):
    tools: list[CliToolSpec] = msgspec.field(default_factory=list)


def load_tools_file(path: Path) -> list[CliToolSpec]:
    """The tools a YAML file declares, checked; an absent file declares none."""
    if not path.is_file():
        return []
    try:
        text = path.read_text()
    except OSError as exc:
        raise CliToolError(f"{path}: {exc}") from None
    return parse_tools_text(text, str(path))


def parse_tools_text(text: str, origin: str) -> list[CliToolSpec]:
    """The tools a YAML text declares, checked; errors name ``origin`` (the file)."""
    import yaml  # here: only a tools file needs it, and it takes a twentieth of a second

    try:
        raw = yaml.safe_load(text) or {}
        specs = msgspec.convert(raw, type=_ToolsFile).tools
    except (yaml.YAMLError, msgspec.ValidationError) as exc:
        raise CliToolError(f"{origin}: {exc}") from None
    for spec in specs:
        _check_spec(spec, origin)
    return specs


def _check_spec(spec: CliToolSpec, path: str) -> None:
    if not _NAME.match(spec.name):
        raise CliToolError(f"{path}: tool name {spec.name!r} is not a valid tool name")
    for template in [*spec.args, *(w for ws in spec.optional_args.values() for w in ws)]:
        for name in _PLACEHOLDER.findall(template):
            if name not in spec.parameters:
                raise CliToolError(f"{path}: tool {spec.name}: {{{{{name}}}}} is not a parameter")
    for name, parameter in spec.parameters.items():
        if parameter.path and parameter.type != "string":
            raise CliToolError(f"{path}: tool {spec.name}: path parameter {name} must be a string")
        if parameter.pattern is not None:
            try:
                re.compile(parameter.pattern)
            except re.error as exc:
                raise CliToolError(
                    f"{path}: tool {spec.name}: bad pattern for {name}: {exc}"
                ) from None
    for name in spec.optional_args:
        if name not in spec.parameters:
            raise CliToolError(f"{path}: tool {spec.name}: optional_args {name} is not a parameter")


def path_parameters(spec: CliToolSpec) -> tuple[str, ...]:
    """The parameters the declaration says are paths."""
    return tuple(name for name, parameter in spec.parameters.items() if parameter.path)


def json_schema(spec: CliToolSpec) -> dict[str, Any]:
    """The schema the model sees (the same constraints the validation enforces)."""
    properties: dict[str, Any] = {}
    for name, parameter in spec.parameters.items():
        prop: dict[str, Any] = {"type": parameter.type}
        if parameter.description:
            prop["description"] = parameter.description
        if parameter.enum is not None:
            prop["enum"] = list(parameter.enum)
        if parameter.pattern is not None:
            prop["pattern"] = parameter.pattern
        if parameter.maxLength is not None:
            prop["maxLength"] = parameter.maxLength
        properties[name] = prop
    required = [n for n, p in spec.parameters.items() if not p.optional]
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}  # fmt: skip


def validate(spec: CliToolSpec, arguments: Mapping[str, Any]) -> dict[str, str]:
    """Each argument checked against its parameter and turned into its text."""
    unknown = sorted(set(arguments) - set(spec.parameters))
    if unknown:
        raise ValueError(f"unknown parameter(s): {', '.join(unknown)}")
    values: dict[str, str] = {}
    for name, parameter in spec.parameters.items():
        if name not in arguments or arguments[name] is None:
            if not parameter.optional:
                raise ValueError(f"missing required parameter `{name}`")
            continue
        values[name] = _checked(name, parameter, arguments[name])
    return values


def _checked(name: str, parameter: ParameterSpec, value: Any) -> str:
    expected = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,)}
    if not isinstance(value, expected[parameter.type]) or (
        isinstance(value, bool) and parameter.type != "boolean"
    ):
        raise ValueError(f"`{name}` must be a {parameter.type}")
    if parameter.enum is not None and value not in parameter.enum:
        allowed = ", ".join(str(v) for v in parameter.enum)
        raise ValueError(f"`{name}` must be one of: {allowed}")
    text = str(value).lower() if isinstance(value, bool) else str(value)
    if parameter.maxLength is not None and len(text) > parameter.maxLength:
        raise ValueError(f"`{name}` is longer than {parameter.maxLength} characters")
    if parameter.pattern is not None and not re.fullmatch(parameter.pattern, text):
        raise ValueError(f"`{name}` does not match the pattern {parameter.pattern}")
    if "\x00" in text:
        raise ValueError(f"`{name}` contains a NUL character")
    return text


def build_argv(spec: CliToolSpec, values: Mapping[str, str]) -> list[str]:
    """The argument vector: each template word becomes exactly one argument."""

    def fill(template: str) -> str:
        return _PLACEHOLDER.sub(lambda match: values[match.group(1)], template)

    argv = [spec.cmd, *(fill(word) for word in spec.args)]
    for name, words in spec.optional_args.items():
        if name in values:
            argv += [fill(word) for word in words]
    return argv


def tool_env(spec: CliToolSpec, host_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables a tool declares, ``${VAR}`` taken from the host's environment."""
    source = os.environ if host_env is None else host_env
    return {
        key: _ENV_REFERENCE.sub(lambda match: source.get(match.group(1), ""), value)
        for key, value in spec.env.items()
    }
