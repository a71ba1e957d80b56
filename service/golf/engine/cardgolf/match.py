"""A match: 9 or 18 holes on one set of rules, the lowest total wins. Each hole's deal comes from the match seed,
and the first seat moves one place left every hole (the deal passes round the table)."""

from __future__ import annotations

from dataclasses import dataclass

from golf.engine.cardgolf.outcome import HoleResult
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.cardgolf.state import HoleState, deal


def hole_seed(match_seed: str, hole: int) -> str:
    """The seed of hole ``hole`` (0-based) of a match."""
    return f"{match_seed}:hole:{hole}"


def deal_hole(rules: GolfRules, players: int, match_seed: str, hole: int) -> HoleState:
    """Deal hole ``hole`` (0-based) of the match ``match_seed``."""
    return deal(rules, players, hole_seed(match_seed, hole), first=hole % players)


@dataclass(frozen=True, slots=True)
class ScoreSheet:
    """The running score sheet of a match."""

    players: int
    holes: tuple[tuple[int, ...], ...] = ()
    """Points per seat, one row per hole played."""

    def add(self, result: HoleResult) -> ScoreSheet:
        """The sheet with one more hole."""
        return ScoreSheet(self.players, (*self.holes, result.scores))

    @property
    def totals(self) -> tuple[int, ...]:
        """Total points per seat."""
        return tuple(sum(row[s] for row in self.holes) for s in range(self.players))

    @property
    def leaders(self) -> tuple[int, ...]:
        """The seats with the lowest total (the winners once the match is over)."""
        totals = self.totals
        low = min(totals)
        return tuple(s for s, t in enumerate(totals) if t == low)

    def render(self, names: list[str] | None = None) -> str:
        """The sheet as a text table."""
        names = names or [f"seat {s}" for s in range(self.players)]
        width = max(8, *(len(n) for n in names))
        head = "hole " + " ".join(f"{n:>{width}}" for n in names)
        rows = [f"{i + 1:>4} " + " ".join(f"{v:>{width}}" for v in row) for i, row in enumerate(self.holes)]
        total = "total" + " ".join(f"{v:>{width}}" for v in self.totals)
        return "\n".join([head, *rows, total])


def match_over(rules: GolfRules, sheet: ScoreSheet) -> bool:
    """Whether every hole of the match has been played."""
    return len(sheet.holes) >= rules.holes
