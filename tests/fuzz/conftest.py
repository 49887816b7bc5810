"""The fuzzer starts the same real stack as the wire tests."""

from tests.wire import conftest as wire_fixtures

start_stack = wire_fixtures.start_stack
