"""Structured CLI tools from YAML (S6.7-S6.9, S6.13): the seed's own example file."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from actors.tools.cli_tools import (
    CliToolError,
    build_argv,
    json_schema,
    load_tools_file,
    parse_tools_text,
    path_parameters,
    tool_env,
    validate,
)

SEED_EXAMPLE = """
tools:
  - name: kubectl_get
    description: "Get Kubernetes resources"
    category: read
    cmd: kubectl
    args: ["get", "{{resource}}"]
    optional_args:
      namespace: ["-n", "{{namespace}}"]
    parameters:
      resource:
        type: string
        enum: [pods, services, deployments]
      namespace:
        type: string
        pattern: "^[a-z0-9-]+$"
        optional: true
  - name: echo_words
    category: read
    cmd: printf
    args: ["%s|", "{{text}}"]
    parameters:
      text: {type: string, maxLength: 40}
    env:
      DEPLOY_TOKEN: "${DEPLOY_TOKEN}"
"""


@pytest.fixture
def specs(tmp_path: Path):
    path = tmp_path / "tools.yaml"
    path.write_text(SEED_EXAMPLE)
    return {spec.name: spec for spec in load_tools_file(path)}


def test_s6_7_tools_from_yaml_are_described_to_the_model(specs) -> None:
    schema = json_schema(specs["kubectl_get"])
    assert schema["required"] == ["resource"]
    assert schema["properties"]["resource"]["enum"] == ["pods", "services", "deployments"]
    assert specs["kubectl_get"].category == "read"


def test_values_land_each_in_its_own_argument(specs) -> None:
    spec = specs["kubectl_get"]
    argv = build_argv(spec, validate(spec, {"resource": "pods", "namespace": "kube-system"}))
    assert argv == ["kubectl", "get", "pods", "-n", "kube-system"]
    assert build_argv(spec, validate(spec, {"resource": "pods"})) == ["kubectl", "get", "pods"]


def test_s6_8_metacharacters_stay_literal(specs, tmp_path: Path) -> None:
    spec = specs["echo_words"]
    text = "a; touch pwned && $(id)"
    argv = build_argv(spec, validate(spec, {"text": text}))
    result = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=True)
    assert result.stdout == f"{text}|"
    assert not (tmp_path / "pwned").exists()


def test_s6_9_injection_through_a_parameter_is_rejected(specs) -> None:
    spec = specs["kubectl_get"]
    with pytest.raises(ValueError, match="one of"):
        validate(spec, {"resource": "pods; rm -rf ~"})
    with pytest.raises(ValueError, match="pattern"):
        validate(spec, {"resource": "pods", "namespace": "x; rm -rf ~"})
    with pytest.raises(ValueError, match="longer than"):
        validate(specs["echo_words"], {"text": "x" * 41})
    with pytest.raises(ValueError, match="unknown"):
        validate(spec, {"resource": "pods", "extra": "1"})


def test_s6_13_declared_variables_pass_through(specs) -> None:
    env = tool_env(specs["echo_words"], {"DEPLOY_TOKEN": "t-123", "OTHER": "x"})
    assert env == {"DEPLOY_TOKEN": "t-123"}


def test_a_bad_file_names_itself(tmp_path: Path) -> None:
    path = tmp_path / "tools.yaml"
    path.write_text("tools:\n  - name: x\n    cmd: y\n    args: ['{{missing}}']\n")
    with pytest.raises(CliToolError, match="missing"):
        load_tools_file(path)
    path.write_text("tools: [ {name: x, cmd: y, bogus: 1} ]")
    with pytest.raises(CliToolError, match="bogus"):
        load_tools_file(path)
    assert load_tools_file(tmp_path / "absent.yaml") == []


def test_a_path_parameter_is_declared_and_must_be_a_string() -> None:
    text = """
tools:
  - name: show
    cmd: cat
    args: ["{{file}}", "{{count}}"]
    parameters:
      file: {type: string, path: true}
      count: {type: integer}
"""
    (spec,) = parse_tools_text(text, "tools.yaml")
    assert path_parameters(spec) == ("file",)
    with pytest.raises(CliToolError, match="path parameter count must be a string"):
        parse_tools_text(text.replace("{type: integer}", "{type: integer, path: true}"), "t")
