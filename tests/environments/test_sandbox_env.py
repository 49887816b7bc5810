"""Which variables a command gets: under the default policy only an allowlist
(with ``LC_*`` and where toolchains live), and whatever the policy, never a
secret-looking one; the same rules in the bash an SSH host runs."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from actors.kernel import Runtime
from actors.policy.engine import env_allowlist
from actors.policy.presets import policy_preset, resolve_policy
from environments.envvars import EnvPolicy, restricted_to
from environments.local import LocalEnvironment
from environments.shell.scripts import environment_script
from protocol.environment import ExecCommand

SECRETS = {
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "PGPASSWORD": "pg-secret",
    "GITHUB_TOKEN": "gh-secret",
    "ANTHROPIC_API_KEY": "provider-secret",
    "MY_PRIVATE_KEY": "pk-secret",
}
KEPT = {"LC_CTYPE": "C.UTF-8", "VIRTUAL_ENV": "/opt/venv", "LANG": "C.UTF-8"}
DROPPED = {"SOME_TOOL_SETTING": "not-listed"}


@pytest.fixture
def variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {**SECRETS, **KEPT, **DROPPED}.items():
        monkeypatch.setenv(name, value)


def shown(output: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)


@pytest.mark.usefixtures("variables")
async def test_the_default_policy_passes_only_its_allowlist(
    tmp_path: Path, runtime: Runtime
) -> None:
    ref = await runtime.spawn(LocalEnvironment(tmp_path))
    allowlist = env_allowlist(policy_preset("interactive"))
    done = await ref.ask(ExecCommand("env", env_allowlist=allowlist, env_vars={"DECLARED": "1"}))
    seen = shown(done.stdout)
    assert not set(SECRETS) & set(seen), "no secret is inherited"
    assert all(seen.get(name) == value for name, value in KEPT.items())
    assert "SOME_TOOL_SETTING" not in seen and seen["DECLARED"] == "1"
    # A name the user lists is theirs to pass (even one that looks like a secret).
    chosen = env_allowlist(resolve_policy("interactive", {"env_allow": ["PGPASSWORD"]}))
    listed = shown((await ref.ask(ExecCommand("env", env_allowlist=chosen))).stdout)
    assert listed["PGPASSWORD"] == "pg-secret" and "AWS_SECRET_ACCESS_KEY" not in listed


@pytest.mark.usefixtures("variables")
async def test_secrets_stay_out_without_an_allowlist_too(tmp_path: Path, runtime: Runtime) -> None:
    """``env = "deny_secrets"`` (the permissive preset) inherits the rest, never a
    secret-looking name."""
    assert env_allowlist(policy_preset("permissive")) is None
    ref = await runtime.spawn(LocalEnvironment(tmp_path))
    seen = shown((await ref.ask(ExecCommand("env"))).stdout)
    assert not set(SECRETS) & set(seen)
    assert seen["SOME_TOOL_SETTING"] == "not-listed"


@pytest.mark.usefixtures("variables")
async def test_the_remote_script_applies_the_same_rules() -> None:
    """The bash an SSH host runs (for commands and the persistent terminal), run
    here by a real bash over an environment holding the secrets."""
    allowlist = env_allowlist(policy_preset("interactive"))
    script = environment_script(restricted_to(EnvPolicy(), allowlist), {"DECLARED": "1"})
    done = await trio.run_process(["bash", "-c", f"{script}\nenv"], capture_stdout=True, check=True)
    seen = shown(done.stdout.decode())
    assert not set(SECRETS) & set(seen)
    assert all(seen.get(name) == value for name, value in KEPT.items())
    assert "SOME_TOOL_SETTING" not in seen and seen["DECLARED"] == "1"
    everything = environment_script(EnvPolicy())
    rest = await trio.run_process(
        ["bash", "-c", f"{everything}\nenv"], capture_stdout=True, check=True
    )
    left = shown(rest.stdout.decode())
    assert not set(SECRETS) & set(left) and left["SOME_TOOL_SETTING"] == "not-listed"
