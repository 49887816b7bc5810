"""The retry policy: exponential backoff with jitter and Retry-After, per the spec.

What is retried is decided here, in one place: typed errors carry ``retryable``
(a provider's ``x-should-retry`` header overrides it); 401 and 403 never are; a
timeout is not by default (slow is not transient). A server's Retry-After (or
``retry-after-ms``) is waited out, however much longer than ``max_delay`` it is, up to
``max_retry_after``; longer than that the error is raised at once, so that a
session with a fallback endpoint moves on rather than sit idle.
"""

from __future__ import annotations

import random

import msgspec

from actors.models.errors import AccessDeniedError, AuthenticationError, ModelError


class RetryPolicy(msgspec.Struct, frozen=True):
    max_retries: int = 2
    base_delay: float = 1.0
    max_delay: float = 60.0
    """The longest backoff of our own choosing."""
    max_retry_after: float = 120.0
    """The longest wait a server may ask for with Retry-After before we give up."""
    backoff_multiplier: float = 2.0
    jitter: bool = True

    def delay(
        self, attempt: int, error: ModelError, rng: random.Random | None = None
    ) -> float | None:
        """Seconds to wait before retry number ``attempt`` (0-based), or None: give up."""
        if attempt >= self.max_retries or not error.retryable:
            return None
        if isinstance(error, AuthenticationError | AccessDeniedError):
            return None
        if error.retry_after is not None:
            if error.retry_after > self.max_retry_after:
                return None
            return error.retry_after
        delay = min(self.base_delay * self.backoff_multiplier**attempt, self.max_delay)
        if self.jitter:
            delay *= (rng or random).uniform(0.5, 1.5)
        return delay
