"""A conversation's wire form, built once per adapter and extended as it grows.

A session sends its whole history on every round, and the history only grows: the
messages of round N are the very same (frozen) objects in round N+1. Rebuilding every
message's provider JSON on every round made request building cost more each round;
here each adapter keeps, per conversation, the messages it has already converted and
their encoded JSON (``msgspec.Raw`` pieces, in the wire's own grouping). A request
whose history starts with those messages only converts what is new; the request body
is then one encode that copies the cached bytes.

A conversation is known by its first message (object identity, the object kept so its
id cannot be reused). That the cached messages are still a prefix of the new history
is checked with one list comparison (identity first, then equality, in C), so an
edited or replaced history is simply converted afresh. The cache is bounded in bytes
(the encoded JSON, twice over for the message objects it keeps alive); past the bound
it starts afresh, which costs one full conversion per live conversation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

import msgspec

from protocol.llm import Message

DEFAULT_MAX_BYTES = 64 * 1024 * 1024

_encode = msgspec.json.Encoder().encode


def raw(value: Any) -> msgspec.Raw:
    """``value`` encoded once, to be copied as it is into every request that carries it."""
    return msgspec.Raw(_encode(value))


class WireState(Protocol):
    def add(self, message: Message) -> int:
        """Append one message's wire form; return the bytes it added."""
        ...


S = TypeVar("S", bound=WireState)


class _Entry(Generic[S]):
    __slots__ = ("messages", "size", "state")

    def __init__(self, state: S) -> None:
        self.messages: list[Message] = []
        self.state = state
        self.size = 0


class ConversationCache(Generic[S]):
    """Per conversation: the messages converted so far and their wire state."""

    __slots__ = ("_bytes", "_entries", "converted", "max_bytes")

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: dict[int, tuple[Message, _Entry[S]]] = {}
        self._bytes = 0
        self.converted = 0
        """Messages converted so far (a test's view of "only what is new")."""

    def state(self, messages: list[Message], new_state: Callable[[], S]) -> S:
        """The wire state of ``messages`` (all of them added), reusing what it can."""
        if not messages:
            return new_state()
        first = messages[0]
        found = self._entries.get(id(first))
        entry: _Entry[S] | None = None
        if found is not None and found[0] is first:
            entry = found[1]
            done = len(entry.messages)
            if done > len(messages) or messages[:done] != entry.messages:
                self._bytes -= entry.size
                entry = None  # the history changed under us: convert it afresh
        if entry is None:
            entry = _Entry(new_state())
            self._entries[id(first)] = (first, entry)
        added = 0
        for message in messages[len(entry.messages) :]:
            added += 2 * entry.state.add(message) + 64
            entry.messages.append(message)
            self.converted += 1
        entry.size += added
        self._bytes += added
        if self._bytes > self.max_bytes:
            state = entry.state
            self._entries.clear()
            self._bytes = 0
            return state  # still right for this request; the next one starts afresh
        return entry.state

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)


def leading_system(
    messages: list[Message], roles: tuple[str, ...] = ("system", "developer")
) -> int:
    """How many messages at the start are system or developer instructions (rebuilt
    on every round by the session, so they are not part of the cached conversation)."""
    count = 0
    for message in messages:
        if message.role not in roles:
            break
        count += 1
    return count


class FlatState:
    """A wire whose history is a flat list of encoded items (Chat, Responses)."""

    __slots__ = ("convert", "items", "kinds")

    def __init__(self, convert: Callable[[Message], list[dict[str, Any]]]) -> None:
        self.convert = convert
        self.items: list[msgspec.Raw] = []
        self.kinds: set[str] = set()
        """The item types carried (Responses needs to know about reasoning items)."""

    def add(self, message: Message) -> int:
        converted = self.convert(message)
        self.kinds.update(str(item.get("type", "")) for item in converted)
        encoded = [raw(item) for item in converted]
        self.items += encoded
        return sum(len(item) for item in encoded)


class GroupedState:
    """A wire that merges consecutive same-role messages (Anthropic, Gemini): groups
    of encoded blocks, and the last block as a dict (for a cache breakpoint)."""

    __slots__ = ("content_key", "convert", "groups", "last_block")

    def __init__(
        self,
        convert: Callable[[Message], tuple[str, list[dict[str, Any]]]],
        content_key: str,
    ) -> None:
        self.convert = convert
        self.content_key = content_key
        self.groups: list[dict[str, Any]] = []
        self.last_block: dict[str, Any] | None = None

    def add(self, message: Message) -> int:
        role, blocks = self.convert(message)
        if not blocks:
            return 0
        encoded = [raw(block) for block in blocks]
        groups = self.groups
        if groups and groups[-1]["role"] == role:
            groups[-1][self.content_key].extend(encoded)
        else:
            groups.append({"role": role, self.content_key: encoded})
        self.last_block = blocks[-1]
        return sum(len(block) for block in encoded)

    def snapshot(self, last_block: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """The groups for one request; ``last_block`` replaces the final block in it
        (the cached groups stay untouched)."""
        groups = list(self.groups)
        if last_block is not None and groups:
            tail = groups[-1]
            content = list(tail[self.content_key])
            content[-1] = last_block
            groups[-1] = {**tail, self.content_key: content}
        return groups
