"""What the fuzzer sends: valid requests, the same requests mutated, and hostile
frames. Paths stay inside the server's working directory and commands come from a
harmless list: the fuzzer runs real commands on this machine."""

from __future__ import annotations

import json
from typing import Any, Protocol, TypeVar

import msgspec
from hypothesis import strategies as st

T = TypeVar("T")


class Draw(Protocol):
    """What the helpers draw with: ``data.draw`` in a rule (hypothesis's ``DrawFn``
    describes only ``@composite``'s argument, so a rule's ``data.draw`` is not one)."""

    def __call__(self, strategy: st.SearchStrategy[T], label: Any = None) -> T: ...


SAFE_COMMANDS = ["echo fuzz", "true", "exit 3", "printf '%s' x", "echo \x00", "echo " + "x" * 5000]
PROFILES = ["openai", "anthropic", "gemini"]
SSH_TARGET = "ssh://fuzz@127.0.0.1:9"  # the discard port: refused at once

names = st.one_of(
    st.sampled_from(["box", "build-box", "b.2", "x_y", "bad name", "", "-x", "\U0001f600", "a/b"]),
    st.text(min_size=0, max_size=12),
)
models = st.one_of(
    st.sampled_from(["gpt-test", "llama3.1:8b", "hf.co/org/model", "a\bb", "x y", "é", ""]),
    st.text(max_size=20),
)
segments = st.one_of(
    st.sampled_from(["f.txt", "dir", "new.txt", "a\x00b", "n" * 300, "sub dir", "é.txt"]),
    st.text(alphabet=st.characters(blacklist_characters="/\x00.", codec="utf-8"), min_size=1,
            max_size=10),
)  # fmt: skip
relative_paths = st.lists(segments, min_size=1, max_size=3).map("/".join)
"""Never absolute and never ``..``: writes stay inside the working directory."""
texts = st.text(max_size=40)
small_ints = st.integers(min_value=-3, max_value=60)
hostile_ints = st.one_of(
    small_ints,
    st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64, 2**70]),
)
hostile_values = st.one_of(
    hostile_ints,
    texts,
    st.sampled_from(["\x00", "a\x00b", "n" * 300, "\ud800", "", "/sessions/s-x"]),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


def configs() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "max_turns": st.integers(0, 5),
            "max_tool_rounds_per_input": st.integers(0, 5),
            "model": models,
            "reasoning_effort": st.sampled_from(["low", "high", "bad effort"]),
            "tool_output_limits": st.dictionaries(st.sampled_from(["shell"]), hostile_ints),
            "tool_line_limits": st.dictionaries(st.sampled_from(["shell"]), st.none() | small_ints),
            "default_command_timeout_ms": st.integers(-1, 20_000),
            "max_command_timeout_ms": st.integers(-1, 20_000),
            "loop_detection_window": small_ints,
            "max_subagent_depth": st.integers(-1, 3),
            "max_subagents": small_ints,
            "context_warning_ratio": st.floats(-1, 2),
            "user_instructions": texts,
        },
    )


def pick(draw: Draw, options: list[str]) -> str:
    """One of ``options``, drawn so that the draw's shape never depends on how many
    there are (the server's state grows across examples)."""
    return options[draw(st.integers(0, 2**16)) % len(options)]


def valid_request(
    draw: Draw, kind: str, sessions: list[str], environments: list[str], work: str
) -> dict[str, Any]:
    """A well-formed request of ``kind`` (its values may still be refused)."""
    # Every draw happens whatever the server's state, so that hypothesis sees the
    # same shape of choices on every run (the state only picks among them).
    unknown = draw(st.sampled_from(["s-missing", "/sessions/s-missing"]))
    known = pick(draw, sessions or [unknown])
    by_address = draw(st.booleans())
    session = known if draw(st.integers(0, 3)) else unknown
    if by_address and not session.startswith("/"):
        session = f"/sessions/{session}"
    environment = pick(draw, [*environments, "local", "/environments/local", "nope"])
    match kind:
        case "create_session":
            frame: dict[str, Any] = {}
            if draw(st.booleans()):
                frame["profile"] = draw(st.sampled_from([*PROFILES, "nope"]))
            if draw(st.booleans()):
                frame["config"] = draw(configs())
            if draw(st.integers(0, 5)) == 0:
                frame["working_dir"] = draw(st.sampled_from(
                    [work, f"{work}/f.txt", "w\x00", "n" * 300, f"{work}/" + "d/" * 3000,
                     "/proc/1/root/x"]
                ))  # fmt: skip
            return frame
        case "submit" | "steer" | "follow_up":
            return {"session": session, "text": draw(texts)}
        case "get_session" | "unsubscribe":
            return {"session": session}
        case "subscribe":
            return {"session": session, "after_seq": draw(small_ints)}
        case "interrupt":
            return {"session": session, "immediate": draw(st.booleans())}
        case "abort":
            return {"session": session}
        case "update_config":
            fields: dict[str, Any] = {"session": session}
            if draw(st.booleans()):
                fields["model"] = draw(models)
            if draw(st.booleans()):
                fields["max_turns"] = draw(small_ints)
            if draw(st.booleans()):  # Troupe's own fields among them are refused
                keys = st.sampled_from(["service_tier", "seed", "model", "messages", "stream", ""])
                values = st.one_of(st.none(), small_ints, texts)
                fields["provider_options"] = draw(st.dictionaries(keys, values, max_size=3))
            return fields
        case "resolve_approval":
            return {"session": session, "request_id": draw(texts), "approved": draw(st.booleans())}
        case "exec":
            frame = {"environment": environment, "command": draw(st.sampled_from(SAFE_COMMANDS))}
            if draw(st.booleans()):
                frame["working_dir"] = draw(relative_paths)
            if draw(st.booleans()):
                frame["timeout_ms"] = draw(st.integers(0, 5000))
            return frame
        case "read_file":
            return {"environment": environment, "path": draw(relative_paths)}
        case "write_file":
            return {"environment": environment, "path": draw(relative_paths), "content": "fuzz"}
        case "add_ssh_environment":
            targets = [SSH_TARGET, "ssh://[::1", "", "u@h:abc", "ssh://u@h:99999", "alias"]
            return {"name": draw(names), "target": draw(st.sampled_from(targets))}
        case "add_environment":
            targets = [SSH_TARGET, "ssh://[::1", "", "u@h:abc", "ssh://u@h:99999", "alias"]
            specs: list[dict[str, Any]] = [
                {"kind": "ssh", "target": draw(st.sampled_from(targets))},
                {"kind": "local", "working_dir": draw(relative_paths)},
                {"kind": "docker", "image": "", "workspace": "/tmp"},
                {"kind": "docker", "image": "debian", "workspace": draw(relative_paths)},
                {"kind": "podman", "image": "x"},
                {"target": SSH_TARGET},
            ]
            return {"name": draw(names), "spec": draw(st.sampled_from(specs))}
        case "remove_environment":
            return {"environment": pick(draw, [*environments, "nope", "local"])}
    return {}


SAFE_FIELDS = {"path": relative_paths, "working_dir": relative_paths,
               "command": st.sampled_from(SAFE_COMMANDS)}  # fmt: skip


def mutate(draw: Draw, frame: dict[str, Any]) -> dict[str, Any]:
    """The frame with one thing wrong: a field's value, a missing or unknown field,
    or an unknown type. The id is kept, so exactly one reply must carry it."""
    mutated = dict(frame)
    fields = [name for name in frame if name not in ("id", "type")]
    how = draw(st.sampled_from(["value", "value", "drop", "extra", "type"]))
    if how == "value" and fields:
        name = draw(st.sampled_from(fields))
        mutated[name] = draw(SAFE_FIELDS.get(name, hostile_values))
    elif how == "drop" and fields:
        del mutated[draw(st.sampled_from(fields))]
    elif how == "extra":
        mutated[draw(st.text(max_size=8))] = draw(hostile_values)
    else:
        mutated["type"] = draw(st.one_of(texts, st.sampled_from(["hello", "", "event"])))
    return mutated


def encodable(frame: dict[str, Any], encoding: str) -> str | bytes | None:
    """The frame encoded, or None if this encoding cannot carry it at all."""
    try:
        if encoding == "json":
            return json.dumps(frame)
        return msgspec.msgpack.encode(frame)
    except (UnicodeEncodeError, OverflowError, TypeError, ValueError):
        return None


HOSTILE_FRAMES: dict[str, dict[str, str | bytes]] = {
    "json": {
        "deep": "[" * 2000 + "]" * 2000,
        "garbage": "{not json",
        "binary": b"\x00\xff",
        "array": "[1, 2]",
        "surrogate_without_id": '{"type": "list_sessions", "x": "\\udc00"}',
        "hello_again": json.dumps({"type": "hello", "version": 1}),
    },
    "msgpack": {
        "deep": b"\x91" * 2000 + b"\x90",
        "bad_utf8": b"\x81\xa4type\xa2\xff\xfe",
        "truncated": b"\x82\xa4type",
        "text": '{"type": "list_sessions", "id": 1}',
        "id_too_big": msgspec.msgpack.encode({"type": "list_sessions", "id": 2**64 - 1}),
    },
}
