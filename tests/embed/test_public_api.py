"""The names a user embedding Troupe needs are where the README says (issue 31,
point 9), and a wire format is accepted in the command line's spelling and the
library's, with a one-line error naming the known ones."""

from __future__ import annotations

import subprocess
import sys

import pytest

from actors.models.config import endpoint, endpoint_from_env
from actors.models.errors import ConfigurationError
from tests.embed.conftest import REPO


def test_the_names_import_from_the_package_roots() -> None:
    code = (
        "from actors import Runtime\n"
        "from actors.session import SessionActor, openai_profile, anthropic_profile, "
        "gemini_profile, Submit, Steer, Subscribe, SessionConfig\n"
        "from environments import LocalEnvironment, SSHBridge, AddSSHHost\n"
        "from actors.models import endpoint_from_env, open_gateway\n"
        "import sys; print('asyncssh' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    with pytest.raises(AttributeError):
        import actors.session

        _ = actors.session.NoSuchThing  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("spelling", "wire"),
    [("openai-chat", "openai_chat"), ("openai_chat", "openai_chat"), ("openai", "openai_responses"),
     ("openai-responses", "openai_responses"), ("anthropic", "anthropic")],
)  # fmt: skip
def test_every_spelling_of_a_wire(spelling: str, wire: str) -> None:
    keys = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    assert endpoint_from_env(spelling, keys).wire == wire  # type: ignore[arg-type]
    assert endpoint(spelling, "http://127.0.0.1:9/v1").wire == wire  # type: ignore[arg-type]


def test_an_unknown_wire_is_one_line_naming_the_known_ones() -> None:
    with pytest.raises(ConfigurationError) as raised:
        endpoint_from_env("open-ai", {"OPENAI_API_KEY": "k"})  # type: ignore[arg-type]
    message = str(raised.value)
    assert "\n" not in message and "openai-chat" in message and "'open-ai'" in message
