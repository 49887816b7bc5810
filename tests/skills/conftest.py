from tests.cli.conftest import home

__all__ = ["home"]
