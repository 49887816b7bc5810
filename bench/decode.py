"""Frame decoding benchmark: what the decoder's checks (nesting limit, 64-bit
integers, readable ids) cost on ordinary frames, against msgspec's typed decoder
alone, and how long the largest hostile frame takes to refuse.

    python bench/decode.py          # a table
    python bench/decode.py --json   # one JSON object

Both sides run alternately in the same process, warmed alike; each figure is the
min and the median of the repeats, and the overhead is a ratio to the baseline.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.report import Figure, emit, parse_args
from protocol.wire import DEFAULT_MAX_FRAME, ClientFrame, Codec, FrameError

FRAMES = [
    {"type": "submit", "id": 1, "session": "s-3f2a9c01", "text": "fix the failing test " * 20},
    {"type": "subscribe", "id": 2, "session": "/sessions/s-3f2a9c01", "after_seq": 1234},
    {"type": "create_session", "id": 3, "profile": "openai",
     "config": {"max_turns": 20, "model": "gpt-test", "tool_output_limits": {"shell": 30000},
                "tool_line_limits": {"shell": 256}}},
    {"type": "write_file", "id": 4, "environment": "local", "path": "src/app.py",
     "content": "print('hello')\n" * 2000},
]  # fmt: skip


def _time(decode, payloads: list[bytes], rounds: int) -> float:
    started = time.perf_counter()
    for _ in range(rounds):
        for payload in payloads:
            decode(payload)
    return (time.perf_counter() - started) / (rounds * len(payloads))


def _refuse(codec: Codec, payload: str | bytes) -> None:
    """Decode a hostile frame; refused or (if harmless) accepted, it must answer."""
    try:
        codec.decode(payload)
    except FrameError:
        return


def _checked(codec: Codec):
    """The codec's decode as the gateway calls it (JSON arrives as text)."""
    if codec.encoding == "json":
        return lambda payload: codec.decode(payload.decode())
    return codec.decode


def _hostile() -> dict[str, str | bytes]:
    """Frames of the largest allowed size built to make the checks work hardest."""
    half = DEFAULT_MAX_FRAME // 2 - 16
    many_lists = msgspec.msgpack.encode(
        {"type": "list_sessions", "id": 1, "x": [[]] * (half // 2), "y": [[[1]]] * 40}
    )
    return {
        "json_4MiB_nested": "[" * half + "]" * half,
        "json_4MiB_of_pairs": '{"type": "list_sessions", "id": 1, "x": [' + "[]," * (half // 2)
        + "[]]}",
        "msgpack_4MiB_nested": b"\x91" * (half * 2),
        "msgpack_2M_small_lists": many_lists,
        "msgpack_4M_integers": msgspec.msgpack.encode({"type": "list_sessions", "id": 1,
                                                       "x": [1] * half * 2, "y": [[[1]]] * 40}),
    }  # fmt: skip


def _loose_decode(frame: str | bytes) -> Callable[[], object]:
    """Decode ``frame`` with no schema (the baseline), by its own encoding."""
    if isinstance(frame, str):
        text_decoder = msgspec.json.Decoder()
        return lambda: text_decoder.decode(frame)
    binary_decoder = msgspec.msgpack.Decoder()
    return lambda: binary_decoder.decode(frame)


def main() -> None:
    args = parse_args(__doc__ or "")
    rounds, repeats = (200, 3) if args.quick else (2000, 7)
    figures: list[Figure] = []
    for encoding in ("json", "msgpack"):
        codec = Codec(encoding)  # type: ignore[arg-type]
        module = msgspec.json if encoding == "json" else msgspec.msgpack
        plain = module.Decoder(ClientFrame)
        payloads = [module.encode(frame) for frame in FRAMES]
        checked = _checked(codec)
        for _ in range(2):  # warm both alike
            _time(plain.decode, payloads, rounds // 10)
            _time(checked, payloads, rounds // 10)
        base, ours = [], []
        for _ in range(repeats):  # alternate the two sides
            base.append(_time(plain.decode, payloads, rounds))
            ours.append(_time(checked, payloads, rounds))
        ratio = [o / b for o, b in zip(ours, base, strict=True)]
        figures += [
            Figure(f"{encoding}_plain_us", f"{encoding}: msgspec alone (median)",
                   statistics.median(base) * 1e6, "us/frame"),
            Figure(f"{encoding}_checked_us", f"{encoding}: with the checks (median)",
                   statistics.median(ours) * 1e6, "us/frame"),
            Figure(f"{encoding}_ratio_min", f"{encoding}: checked / plain (min)", min(ratio), "x"),
            Figure(f"{encoding}_ratio_median", f"{encoding}: checked / plain (median)",
                   statistics.median(ratio), "x"),
        ]  # fmt: skip
    for name, frame in _hostile().items():
        encoding = "json" if isinstance(frame, str) else "msgpack"
        codec = Codec(encoding)  # type: ignore[arg-type]
        loose = _loose_decode(frame)
        ours, base = [], []
        for _ in range(3):
            started = time.perf_counter()
            _refuse(codec, frame)
            ours.append(time.perf_counter() - started)
            started = time.perf_counter()
            with contextlib.suppress(RecursionError, msgspec.DecodeError):
                loose()
            base.append(time.perf_counter() - started)
        figures += [
            Figure(f"{name}_ms", f"{name}: answer it (min)", min(ours) * 1000, "ms"),
            Figure(f"{name}_ratio", f"{name}: / msgspec reading it untyped (min)",
                   min(ours) / max(min(base), 1e-9), "x"),
        ]  # fmt: skip
    emit("Frame decoding (the machine was shared; ratios are what compare)", figures, args.json)


if __name__ == "__main__":
    main()
