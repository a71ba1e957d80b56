"""Records written when a game, round or match finishes, in the transaction of the move that finished it: the
players' history rows, their leaderboard entries, the deal's statistics and the card Golf ratings. A score exists
only because the server saw the game finish; nothing else writes these rows.

Ratings are Weng-Lin (openskill's Plackett-Luce model), made for games of more than two players. A match is rated
when it was completed (not abandoned) with two seats or more: each person's rating of the match's preset and their
rating of every preset move, ranked by total points (ties share a rank; a player who resigned ranks last). Bots take
part with a fixed rating of their level and are never rated themselves.
"""

from __future__ import annotations

from datetime import datetime

from openskill.models import PlackettLuce, PlackettLuceRating

from golf.app.boards import (
    ALL_PRESETS,
    BoardEntry,
    Period,
    best,
    deal_board,
    match_entries,
    points_board,
    rating_board,
    rating_entry,
    rounds_board,
    score_entry,
    wins_board,
)
from golf.app.history import PlayedRecord, RecordKind, Result, duration_ms
from golf.app.identity import LEGACY_OWNER, OWN_ISSUER
from golf.app.ports import UnitOfWork
from golf.app.records import GameRecord, RoundRecord, action_moves, effective
from golf.app.tables.entries import SeatMoved
from golf.app.tables.state import Table
from golf.app.tables.status import MatchEnd, TableStatus
from golf.app.tables.writer import Appended, AppendObserver
from golf.engine.cardgolf.bots.catalogue import SEPARATOR as BOT_NAME_SEPARATOR

BOT_RATINGS: dict[str, tuple[float, float]] = {
    "random": (10.0, 1.0),
    "beginner": (16.0, 1.0),
    "greedy": (22.0, 1.0),
    "advanced": (25.0, 1.0),
    "strong": (28.0, 1.0),
}
"""The fixed (mu, sigma) a bot of each level plays with in the rating (a new player starts at 25, 25/3); a bot with
a personality plays with its level's."""
_DEFAULT_BOT = (22.0, 1.0)


def game_moves(line: list[str]) -> int:
    """Moves in effect at the end of a game (an AutoPlay run counts its moves)."""
    return sum(len(action_moves(code)) for _, code in effective(list(enumerate(line))))


class RecordKeeper:
    """Writes the records of finished games, rounds and matches (see the module's docstring)."""

    def __init__(self) -> None:
        self._model = PlackettLuce()

    # -- solitaire ---------------------------------------------------------------------------------------------
    async def hold_player(self, uow: UnitOfWork, player_id: str) -> str:
        """Begin the transaction of a move that will finish a game of ``player_id``'s, holding the player's row
        lock (their records are numbered in commit order), and return the player's issuer. Call it before the
        move's first write, so that the move and its records commit together."""
        if player_id == LEGACY_OWNER:
            return OWN_ISSUER
        return (await uow.records.lock_players([player_id])).get(player_id, OWN_ISSUER)

    async def game_finished(self, uow: UnitOfWork, game: GameRecord, preset: str, issuer: str) -> None:
        """Record ``game``, which the present transaction finished (its row already says so), and its round when
        it was the round's last hole. ``issuer`` is what :meth:`hold_player` returned."""
        if game.owner_id == LEGACY_OWNER or game.finished_at is None:
            return
        finished = game.finished_at
        took = duration_ms(game.created_at, finished)
        hints = game.hints_used + game.autoplay_assists
        won = game.status == "won"
        played = PlayedRecord(
            game.owner_id,
            issuer,
            RecordKind.GAME,
            game.id,
            True,
            preset,
            Result.WON if won else Result.LOST,
            game.score,
            1,
            game_moves(game.line),
            hints,
            game.undos_used,
            took,
            game.created_at,
            finished,
            game.unranked is None,
            deal_id=game.deal_id,
            unranked=game.unranked,
        )
        records = [played]
        entries: list[BoardEntry] = []
        await uow.records.add_deal_result(game.deal_id, preset, won, game.score, took)
        if played.rated:
            board = deal_board(game.deal_id)
            entries.append(
                score_entry(board, game.owner_id, issuer, game.score, took, hints + game.undos_used, finished, game.id)
            )
        round_ = await uow.rounds.get_round(game.round_id) if game.round_id else None
        if round_ is not None and game.hole == round_.holes:
            total = await self._round_record(uow, round_, issuer, finished)
            records.append(total)
            for period in Period if total.rated else ():
                entries.append(
                    score_entry(
                        rounds_board(round_.holes, round_.preset, period, finished),
                        game.owner_id,
                        issuer,
                        total.score,
                        total.duration_ms,
                        total.hints + total.undos,
                        finished,
                        round_.id,
                    )
                )
        await uow.records.add_records(records)
        await self._keep_best(uow, entries)

    async def _round_record(
        self, uow: UnitOfWork, round_: RoundRecord, issuer: str, finished: datetime
    ) -> PlayedRecord:
        games = await uow.rounds.round_games(round_.id)  # this transaction's change to the last hole included
        total = sum(g.score for g in games)
        # A hole that counts for no board (a stock draw undone) takes its round off the ROUNDS boards too.
        unranked = next((g.unranked for g in games if g.unranked is not None), None)
        return PlayedRecord(
            round_.owner_id,
            issuer,
            RecordKind.ROUND,
            round_.id,
            True,
            round_.preset,
            Result.WON if total <= round_.par else Result.LOST,
            total,
            round_.holes,
            sum(game_moves(g.line) for g in games),
            sum(g.hints_used + g.autoplay_assists for g in games),
            sum(g.undos_used for g in games),
            duration_ms(round_.created_at, finished),
            round_.created_at,
            finished,
            unranked is None,
            par=round_.par,
            unranked=unranked,
        )

    async def _keep_best(self, uow: UnitOfWork, entries: list[BoardEntry]) -> None:
        if not entries:
            return
        held = await uow.records.get_board_entries([(e.board, e.player_id) for e in entries])
        better = [e for e in entries if best(held.get((e.board, e.player_id)), e) is not None]
        await uow.records.put_board_entries(better)

    # -- card Golf ---------------------------------------------------------------------------------------------
    async def match_finished(
        self, uow: UnitOfWork, table_id: str, created_at: datetime, before: Table, after: Table, at: datetime
    ) -> None:
        """Record the match of ``after`` when the present transaction ended it: a row per person seated, and
        for a rated match their board entries and ratings."""
        if after.status is not TableStatus.OVER or before.status is TableStatus.OVER:
            return
        people = [(s, seat.player_id) for s, seat in enumerate(after.seats) if seat.player_id is not None]
        if not people:
            return
        issuers = await uow.records.lock_players(sorted({p for _, p in people}))
        totals = after.sheet.totals
        placed = after.sheet.places  # by total, but a seat that won outright (four alike) comes first
        moves = await self._moves_by_seat(uow, table_id)
        rated = after.end is MatchEnd.COMPLETED and len(after.seats) >= 2
        preset = after.options.preset
        holes = len(after.sheet.holes)
        records = []
        for n, (seat, player) in enumerate(people):
            place = placed[seat]
            shared = sum(p == place for p in placed) > 1
            resigned = after.seats[seat].resigned
            result = Result.LOST if resigned or place > 1 else Result.DRAWN if shared else Result.WON
            records.append(
                PlayedRecord(
                    player,
                    issuers.get(player, OWN_ISSUER),
                    RecordKind.MATCH,
                    table_id,
                    n == 0,
                    preset,
                    result,
                    totals[seat],
                    holes,
                    moves.get(seat, 0),
                    0,
                    0,
                    duration_ms(created_at, at),
                    created_at,
                    at,
                    rated,
                    place=place,
                    players=len(after.seats),
                )
            )
        await uow.records.add_records(records)
        if rated:
            await self._rate(uow, after, people, records, at)

    async def _moves_by_seat(self, uow: UnitOfWork, table_id: str) -> dict[int, int]:
        counts: dict[int, int] = {}
        for logged in await uow.tables.get_entries(table_id):
            if isinstance(logged.entry, SeatMoved):
                counts[logged.entry.seat] = counts.get(logged.entry.seat, 0) + 1
        return counts

    async def _rate(
        self,
        uow: UnitOfWork,
        table: Table,
        people: list[tuple[int, str]],
        records: list[PlayedRecord],
        at: datetime,
    ) -> None:
        preset = table.options.preset
        suffixes = (preset, ALL_PRESETS)
        keys = [(b(s), p) for _, p in people for s in suffixes for b in (wins_board, points_board, rating_board)]
        held = await uow.records.get_board_entries(keys)
        entries: list[BoardEntry] = []
        for suffix in suffixes:
            counts: dict[str, BoardEntry] = {}
            for (_, player), record in zip(people, records, strict=True):
                wins, points = match_entries(
                    held.get((wins_board(suffix), player)),
                    held.get((points_board(suffix), player)),
                    suffix,
                    player,
                    record.issuer,
                    record.result is Result.WON,
                    record.holes,
                    record.score,
                    at,
                )
                entries += (wins, points)
                counts[player] = wins
            # A preset's rating moves with its own matches only; the rating of every preset with every match.
            entries += self._ratings(table, people, records, held, counts, rating_board(suffix), at)
        await uow.records.put_board_entries(entries)

    def _ratings(
        self,
        table: Table,
        people: list[tuple[int, str]],
        records: list[PlayedRecord],
        held: dict[tuple[str, str], BoardEntry],
        counts: dict[str, BoardEntry],
        board: str,
        at: datetime,
    ) -> list[BoardEntry]:
        """Every seat's rating on ``board`` before the match, the match's ranks, and the people's entries after it
        (showing the counts of their ``counts`` entry, the wins entry of the same presets)."""
        # Ranked by total points, or by place when a seat won outright (four alike) whatever its points.
        sheet = table.sheet
        order = sheet.places if sheet.won_by else sheet.totals
        worst = max(order) + 1
        teams: list[list[PlackettLuceRating]] = []
        ranks: list[float] = []
        by_seat = dict(people)
        for seat, state in enumerate(table.seats):
            player = by_seat.get(seat)
            if player is not None:  # a person, also one who resigned (a bot plays on for them)
                old = held.get((board, player))
                rating = self._model.rating() if old is None else self._model.rating(old.mu, old.sigma)
            else:
                level = state.bot.partition(BOT_NAME_SEPARATOR)[0] if state.bot else ""
                mu, sigma = BOT_RATINGS.get(level, _DEFAULT_BOT)
                rating = self._model.rating(mu, sigma)
            teams.append([rating])
            ranks.append(float(worst if state.resigned else order[seat]))
        rated = self._model.rate(teams, ranks=ranks)
        out = []
        for (seat, player), record in zip(people, records, strict=True):
            new = rated[seat][0]
            old = held.get((board, player))
            out.append(
                rating_entry(old, player, record.issuer, new.mu, new.sigma, at, board=board, counts=counts[player])
            )
        return out


def match_recorder(records: RecordKeeper) -> AppendObserver:
    """The table observer that records a match in the transaction of the entry that ends it."""

    async def observe(uow: UnitOfWork, appended: Appended) -> None:
        await records.match_finished(
            uow, appended.table_id, appended.record.created_at, appended.before, appended.after, appended.at
        )

    return observe
