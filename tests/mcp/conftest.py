"""MCP tests run real sessions (the session tests' fixture) against real servers."""

from tests.cli.conftest import home
from tests.session.conftest import start_agent
from tests.wire.conftest import start_stack

__all__ = ["home", "start_agent", "start_stack"]
