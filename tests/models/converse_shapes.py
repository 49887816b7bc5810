"""Bedrock Converse shapes checked with botocore's own service model for
``bedrock-runtime`` (the ``service-2.json`` botocore ships): botocore's parameter
validator, made strict about what it leaves alone (enum values, patterns), over request bodies
and the mock's answers. Not written here: the shapes are AWS's."""

from __future__ import annotations

import re
from typing import Any

import pytest

pytest.importorskip("botocore", reason="botocore (the test extra) has the service model")

import botocore.session
import botocore.validate


def service_model() -> Any:
    return botocore.session.get_session().get_service_model("bedrock-runtime")


def _enum_problems(value: Any, shape: Any, where: str) -> list[str]:
    """What botocore's validator does not check: enum values and string patterns
    (a tool name or tool use id Bedrock would refuse), recursively."""
    kind = shape.type_name
    if kind == "string" and isinstance(value, str):
        if shape.enum and value not in shape.enum:
            return [f"{where}: {value!r} is not one of {shape.enum}"]
        pattern = shape.metadata.get("pattern")
        if pattern and not re.fullmatch(pattern, value):
            return [f"{where}: {value!r} does not match {pattern}"]
    problems: list[str] = []
    if kind == "structure" and isinstance(value, dict):
        for name, member in shape.members.items():
            if name in value:
                problems += _enum_problems(value[name], member, f"{where}.{name}")
    elif kind == "list" and isinstance(value, list):
        for index, item in enumerate(value):
            problems += _enum_problems(item, shape.member, f"{where}[{index}]")
    elif kind == "map" and isinstance(value, dict):
        for key, item in value.items():
            problems += _enum_problems(item, shape.value, f"{where}.{key}")
    return problems


def problems(value: Any, shape: Any) -> list[str]:
    """Every way ``value`` breaks ``shape``: unknown keys, missing required members,
    wrong types, lengths and ranges, more than one key of a union, unknown enums."""
    report = botocore.validate.ParamValidator().validate(value, shape)
    found = report.generate_report().splitlines() if report.has_errors() else []
    return found + _enum_problems(value, shape, "")


def request_problems(body: dict[str, Any], model_id: str, operation: str = "Converse") -> list[str]:
    """A Converse (or ConverseStream) request body against the operation's input shape."""
    shape = service_model().operation_model(operation).input_shape
    return problems({"modelId": model_id, **body}, shape)


def response_problems(body: dict[str, Any]) -> list[str]:
    return problems(body, service_model().operation_model("Converse").output_shape)


def stream_event_problems(name: str, payload: dict[str, Any]) -> list[str]:
    """One ConverseStream event (its ``p`` padding aside) against its member shape."""
    stream = service_model().operation_model("ConverseStream").output_shape.members["stream"]
    if name not in stream.members:
        return [f"{name}: not a ConverseStream event"]
    data = {key: value for key, value in payload.items() if key != "p"}
    return problems(data, stream.members[name])
