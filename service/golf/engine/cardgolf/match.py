"""A match: 9 or 18 holes on one set of rules, the lowest total wins (unless four alike wins it at once, under
``four_alike_wins_match``). Each hole's deal comes from the match seed, and the first seat moves one place left
every hole (the deal passes round the table)."""

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
    won_by: tuple[int, ...] = ()
    """The seats that won the match outright (``four_alike_wins_match``: four alike at a hole's end); empty
    while the match is decided by points. Of several seats holding four alike at the same hole's end, those with the
    lowest total after that hole win (sharing the win on a tie)."""

    def add(self, result: HoleResult) -> ScoreSheet:
        """The sheet with one more hole (and the outright winner, if the hole made one and none was made before)."""
        holes = (*self.holes, result.scores)
        won_by = self.won_by
        if not won_by and result.wins_match:
            totals = [sum(row[s] for row in holes) for s in range(self.players)]
            low = min(totals[s] for s in result.wins_match)
            won_by = tuple(s for s in sorted(result.wins_match) if totals[s] == low)
        return ScoreSheet(self.players, holes, won_by)

    @property
    def totals(self) -> tuple[int, ...]:
        """Total points per seat."""
        return tuple(sum(row[s] for row in self.holes) for s in range(self.players))

    @property
    def leaders(self) -> tuple[int, ...]:
        """The seats leading: those that won outright, else those with the lowest total (the winners once the
        match is over)."""
        if self.won_by:
            return self.won_by
        totals = self.totals
        low = min(totals)
        return tuple(s for s, t in enumerate(totals) if t == low)

    @property
    def places(self) -> tuple[int, ...]:
        """Each seat's place, 1 first, seats that tie sharing a place: the outright winners first, then the others
        by total points, lowest first (1 + the seats ahead)."""
        totals = self.totals
        won = set(self.won_by)
        out = []
        for s, mine in enumerate(totals):
            if s in won:
                out.append(1)
            else:
                out.append(1 + len(won) + sum(t < mine for o, t in enumerate(totals) if o not in won))
        return tuple(out)

    def render(self, names: list[str] | None = None) -> str:
        """The sheet as a text table."""
        names = names or [f"seat {s}" for s in range(self.players)]
        width = max(8, *(len(n) for n in names))
        head = "hole " + " ".join(f"{n:>{width}}" for n in names)
        rows = [f"{i + 1:>4} " + " ".join(f"{v:>{width}}" for v in row) for i, row in enumerate(self.holes)]
        total = "total" + " ".join(f"{v:>{width}}" for v in self.totals)
        return "\n".join([head, *rows, total])


def match_over(rules: GolfRules, sheet: ScoreSheet) -> bool:
    """Whether the match is over: every hole has been played, or a seat won it outright."""
    return bool(sheet.won_by) or len(sheet.holes) >= rules.holes
