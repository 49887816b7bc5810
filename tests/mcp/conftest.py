"""MCP tests run real sessions (the session tests' fixture) against real servers."""

from tests.session.conftest import start_agent

__all__ = ["start_agent"]
