from tests.cli.conftest import home
from tests.session.conftest import start_agent

__all__ = ["home", "start_agent"]
