"""Shared parts of the benchmarks: fair comparisons, and output (a table for people,
one JSON object for machines).

A speed is reported as a ratio against a baseline measured in the same run. So
that a ratio says something about Troupe and not about the machine's mood,
:func:`compare` warms both sides alike, alternates them (ABBA order, so neither
always goes first), repeats, and keeps every sample; figures give the min and the
median of each side and of their ratio.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
from collections.abc import Callable, Mapping, Sequence

import msgspec


class Figure(msgspec.Struct, frozen=True):
    """One measured figure, with its target when the issue sets one."""

    key: str
    label: str
    value: float
    unit: str
    target: str = ""
    met: bool | None = None


def parse_args(description: str, argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="smaller counts, for smoke runs")
    return parser.parse_args(argv)


def emit(title: str, figures: Sequence[Figure], as_json: bool) -> None:
    if as_json:
        json.dump({figure.key: figure.value for figure in figures}, sys.stdout)
        sys.stdout.write("\n")
        return
    width = max(len(figure.label) for figure in figures)
    print(title)
    print("-" * len(title))
    for figure in figures:
        verdict = "" if figure.met is None else ("  ok" if figure.met else "  MISSED")
        target = f"  (target {figure.target})" if figure.target else ""
        print(f"{figure.label:<{width}}  {figure.value:>14,.3f} {figure.unit}{target}{verdict}")


class Samples(msgspec.Struct, frozen=True):
    """Every measurement of one side of a comparison, in the order taken."""

    values: list[float]

    @property
    def min(self) -> float:
        return min(self.values)

    @property
    def max(self) -> float:
        return max(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)


def compare(
    sides: Mapping[str, Callable[[], float]], repeats: int, warmups: int = 1
) -> dict[str, Samples]:
    """Run each side ``warmups`` times (discarded), then ``repeats`` rounds in which
    every side runs once, the order reversed every other round. Each run starts on a
    collected heap, so no side pays for the garbage the one before it left."""
    names = list(sides)
    for _ in range(warmups):
        for name in names:
            gc.collect()
            sides[name]()
    taken: dict[str, list[float]] = {name: [] for name in names}
    for round_number in range(repeats):
        order = names if round_number % 2 == 0 else names[::-1]
        for name in order:
            gc.collect()
            taken[name].append(sides[name]())
    return {name: Samples(values) for name, values in taken.items()}


def ratios(numerator: Samples, denominator: Samples) -> Samples:
    """Per-round ratios (round i of one side against round i of the other)."""
    return Samples([a / b for a, b in zip(numerator.values, denominator.values, strict=True)])


def sample_figures(key: str, label: str, samples: Samples, unit: str) -> list[Figure]:
    """The min and median of ``samples`` as two figures (``key_min``, ``key_median``)."""
    return [
        Figure(f"{key}_min", f"{label} (min)", samples.min, unit),
        Figure(f"{key}_median", f"{label} (median)", samples.median, unit),
    ]
