"""Restart policies: Erlang's one-for-one strategy, chosen per spawn.

A long-lived service actor (an execution environment, the SSH bridge) is shared by
every client and every session; if it fails and stays down, one bad request has
taken it from everyone. With a :class:`RestartPolicy` its supervisor starts the
same actor object again at the same address when it fails: its state (the
attributes it keeps) survives, its mailbox and the refs others hold stay valid,
and only the failed incarnation's in-flight work is lost. Siblings are untouched
(one-for-one). A child that fails more than ``max_restarts`` times within
``within`` seconds is given up on and reported as failed, as Erlang's restart
intensity does, so a actor that cannot start does not spin.
"""

from __future__ import annotations

from collections import deque

import msgspec
import trio


class RestartPolicy(msgspec.Struct, frozen=True):
    """Restart the actor when it fails (never when it is stopped)."""

    max_restarts: int = 5
    within: float = 10.0


class RestartBudget:
    """The recent restarts of one actor, against its policy's intensity."""

    __slots__ = ("count", "policy", "times")

    def __init__(self, policy: RestartPolicy) -> None:
        self.policy = policy
        self.times: deque[float] = deque()
        self.count = 0

    def allow(self) -> bool:
        """Record a restart if the intensity allows one more right now."""
        now = trio.current_time()
        while self.times and now - self.times[0] > self.policy.within:
            self.times.popleft()
        if len(self.times) >= self.policy.max_restarts:
            return False
        self.times.append(now)
        self.count += 1
        return True
