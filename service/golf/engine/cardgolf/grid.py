"""Geometry of a grid of ``rows`` x ``cols`` cards. Position ``p`` is row ``p // cols``, column ``p % cols``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

Line = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Geometry:
    """The lines, pairs and blocks of one grid shape, as tuples of positions."""

    rows: int
    cols: int
    row_lines: tuple[Line, ...]
    col_lines: tuple[Line, ...]
    diagonals: tuple[Line, ...]
    adjacent_pairs: tuple[Line, ...]
    blocks: tuple[Line, ...]
    """Every 2x2 block of adjacent cards."""

    @property
    def size(self) -> int:
        """Cards in the grid."""
        return self.rows * self.cols

    def label(self, position: int) -> str:
        """Human label of a position, e.g. ``r1c3`` (1-based)."""
        return f"r{position // self.cols + 1}c{position % self.cols + 1}"


@cache
def geometry(rows: int, cols: int) -> Geometry:
    """The (cached) geometry of a ``rows`` x ``cols`` grid."""

    def at(r: int, c: int) -> int:
        return r * cols + c

    row_lines = tuple(tuple(at(r, c) for c in range(cols)) for r in range(rows))
    col_lines = tuple(tuple(at(r, c) for r in range(rows)) for c in range(cols))
    diagonals: tuple[Line, ...] = ()
    if rows == cols:
        diagonals = (tuple(at(i, i) for i in range(rows)), tuple(at(i, cols - 1 - i) for i in range(rows)))
    pairs = [(at(r, c), at(r, c + 1)) for r in range(rows) for c in range(cols - 1)]
    pairs += [(at(r, c), at(r + 1, c)) for r in range(rows - 1) for c in range(cols)]
    blocks = tuple(
        (at(r, c), at(r, c + 1), at(r + 1, c), at(r + 1, c + 1)) for r in range(rows - 1) for c in range(cols - 1)
    )
    return Geometry(rows, cols, row_lines, col_lines, diagonals, tuple(sorted(pairs)), blocks)
