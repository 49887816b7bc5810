"""How errors cross from trio to the host."""

from __future__ import annotations


def unwrap(error: BaseException) -> BaseException:
    """A group of one is its member: a reader wants the error, not the wrapping."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error
