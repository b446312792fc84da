"""What the CLI commands share: a progress bar on stderr, durations, argument types, error lines."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TextIO


class ProgressBar:
    """``[#####.....] 1,234/5,678 events  4,321/s  1s left`` on a terminal, redrawn in place;
    elsewhere one such line every few seconds. ``unit`` names what is counted; a subclass
    overrides ``detail`` to show other figures than the rate."""

    def __init__(
        self,
        stream: TextIO,
        width: int = 30,
        clock: Callable[[], float] = time.monotonic,
        unit: str = "events",
    ) -> None:
        self.stream = stream
        self.width = width
        self.clock = clock
        self.unit = unit
        self.started = clock()
        self.tty = stream.isatty()
        self.interval = 0.1 if self.tty else 2.0
        self.last_draw = -1e9
        self.done = 0
        self.total = 0

    def __call__(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        now = self.clock()
        if now - self.last_draw >= self.interval:
            self.last_draw = now
            self._draw(now)

    def detail(self, elapsed: float) -> str:
        return f"{self.done / elapsed:,.0f}/s"

    def line(self, now: float | None = None) -> str:
        now = self.clock() if now is None else now
        elapsed = max(now - self.started, 1e-9)
        total = max(self.total, self.done)
        filled = self.width if total == 0 else self.width * self.done // total
        rate = self.done / elapsed
        left = (total - self.done) / rate if rate > 0 else None
        return (
            f"[{'#' * filled}{'.' * (self.width - filled)}] "
            f"{self.done:,}/{total:,} {self.unit}  {self.detail(elapsed)}  {duration(left)} left"
        )

    def _draw(self, now: float) -> None:
        if self.tty:
            self.stream.write("\r" + self.line(now))
        else:
            self.stream.write(self.line(now) + "\n")
        self.stream.flush()

    def finish(self) -> None:
        self._draw(self.clock())
        if self.tty:
            self.stream.write("\n")
        self.stream.flush()


def duration(seconds: float | None) -> str:
    """``42s``, ``3m05s``, ``2h07m``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def positive(raw: str) -> int:
    """An argparse type: an integer of at least 1."""
    value = int(raw)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{raw} is not a positive integer")
    return value


def non_negative(raw: str) -> int:
    """An argparse type: an integer of at least 0."""
    value = int(raw)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{raw} is negative")
    return value


def fail(message: str, status: int, prog: str = "hearts") -> int:
    """Say why on stderr (``hearts: ...``) and return the exit status to end with."""
    print(f"{prog}: {message}", file=sys.stderr)
    return status
