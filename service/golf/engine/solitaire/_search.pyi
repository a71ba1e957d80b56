"""Types of the compiled search (``_search.pyx``), which mirrors ``_Search.run_python`` in ``solver.py``."""

from collections.abc import Callable

class Search:
    """Raises ValueError for a layout too large for it (positions beyond 63 bits): use the Python search."""

    best_left: int
    best_path: list[int]
    positions: int

    def __init__(
        self,
        colranks: list[list[int]],
        stockranks: list[int],
        heights: list[int],
        top0: int,
        fitmask: list[int],
        stuck_only: bool,
        budget: int,
        stop_every: int,
        stop: Callable[[], bool] | None,
    ) -> None: ...
    def run(self, k: int, floor: int) -> tuple[int, int]:
        """Returns ``(value, status)``: status 0 done, 1 budget used up, 2 stopped."""
