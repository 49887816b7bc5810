"""Shared output for the benchmarks: a table for people, one JSON object for machines."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

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
