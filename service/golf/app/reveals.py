"""Fair reveals: the one rule deciding who may see a finished solitaire game's seed, stock, log and replay.

**No player learns, by any call on any transport, a card of a stock it has not turned in a game it is playing or
may still be dealt.** A finished game shows everything (``reveal``: its seed and whole stock; its log names every
card drawn; its replay steps through them): to its own player at once, to anyone else only once its deal is **out
of play**:

- it is **closed**, no longer dealt as a fresh game: the daily deal once its UTC day has ended, a pool deal once it
  has left the pool (``deals.closed_at``). A deal anyone may still start by its id (one made by ``CreateDeal``, the
  deal made for a new game, a PySolFC number, a client's seed) never closes: its games are shown to their own
  players only;
- at least ``CLOSE_GRACE`` has passed since it closed, so a game dealt as it closed is stored (and seen) by then;
- no **ranked** game on it is in progress. A game started on a closed deal is practice (it counts for no board:
  its stock may already be public), so it neither ranks nor keeps the deal hidden; an abandoned ranked game keeps
  it hidden for good, which is the safe side.

``GetGame``, ``ListMoves`` and ``GetReplay`` (of a game, or of a round hole by hole) ask :func:`check_shown`;
``ExportRecords`` asks :func:`shown_to`. Leaderboards, deal statistics, rounds and histories carry scores, times and
ids, never a card, and their ids lead to those calls. Another player's finished game on a deal in play is refused
with ``DealInPlay`` (its existence is no secret: boards list it); one in progress stays ``NotFound``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from golf.app.errors import DealInPlay
from golf.app.ports import UnitOfWork
from golf.app.quoting import shown
from golf.app.records import DealStanding, GameRecord

CLOSE_GRACE = timedelta(seconds=30)
"""How long after a deal closes its stock stays hidden from others: longer than any transaction that dealt it
as it closed (a pool deal taken just before it left the pool is stored a moment later)."""


def closed(closed_at: datetime | None, now: datetime) -> bool:
    """Whether a deal closing at ``closed_at`` is no longer dealt fresh at ``now``: a game started on it then is
    practice."""
    return closed_at is not None and closed_at <= now


def out_of_play(standing: DealStanding, now: datetime) -> bool:
    """Whether a deal's stock may be shown to everyone: closed a grace ago, and no ranked game on it in play."""
    return standing.closed_at is not None and standing.closed_at + CLOSE_GRACE <= now and not standing.ranked_in_play


async def shown_to(uow: UnitOfWork, viewer_id: str, game: GameRecord, now: datetime) -> bool:
    """Whether ``viewer_id`` may see ``game`` as its own player does (everything, once it is over): it is theirs,
    or it is finished and its deal is out of play."""
    if viewer_id == game.owner_id:
        return True
    if game.status == "in_progress":
        return False
    standing = await uow.deals.deal_standing(game.deal_id)
    return standing is not None and out_of_play(standing, now)


async def check_shown(uow: UnitOfWork, viewer_id: str, game: GameRecord, now: datetime) -> None:
    """Raise ``DealInPlay`` unless ``viewer_id`` may see the finished ``game`` as its player does (see
    :func:`shown_to`). Who may see a game in progress is ``golf.app.access``'s to say (its view hides the stock)."""
    if not await shown_to(uow, viewer_id, game, now):
        raise DealInPlay(
            f"game {shown(game.id)} is on a deal still in play (a game on it is in progress, or it may still be "
            "dealt to players who have not played it): its cards are shown to its own player only until then"
        )
