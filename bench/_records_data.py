"""Synthetic played records for ``records.py``: made in memory with a seeded ``random.Random`` and bulk-loaded
into a migrated PostgreSQL database with COPY (not through the API), consistent with what the service writes.

What a finished game writes (``golf.app.recording``) is written here for every generated game: its ``games`` row
(finished, ``line`` left empty: no query reads it and ``moves`` rows are not loaded), a ``records`` row (kind
``game``, lead), its deal's ``deal_stats`` summed over all its games (practice ones too), and, when scored (not
practice), its entry on the deal's board (``deal:<id>``: k1 score, k2 duration, k3 assists). A round's ninth game
adds the round's record and its three ``rounds:9:standard:*`` entries (all time, ISO week, month), each player's
best kept. A card Golf match writes a record per person seated and, when rated, their ``wins:`` / ``pph:`` entries
(of its preset and of ``*``) and ``rating:*`` entry, computed in finishing order by ``golf.app.boards`` and the
service's Weng-Lin model, bots at their fixed ratings.

Shape: players' activity is Pareto distributed (alpha 1.2, capped: most play tens of games, about 1% thousands);
a deal per UTC day is the daily deal (30% of the games outside rounds, each played by hundreds to thousands);
the other deals' popularity is Zipf-like (1 / (rank + 50)): a few hundred to a few thousand players on the most
played, a handful on most. A player has one scored game per deal (``uq_games_scored``): a player drawn for a deal
they scored is drawn another (up to three times), else plays a practice game (1.7% of the games). Each deal has a
win chance drawn from Beta(2, 4.5) (30% of games won); scores are cards left (1..35) or minus the stock left when
won; durations 30 s to 20 min (log-normal around 3.3 min); hints and undos mostly 0, a few at most. Finishes
spread over the last ``days`` days. About ``round_share`` of the games are the holes of 9-hole rounds (par 45) on
deals their player had not scored.
"""

from __future__ import annotations

import math
import random
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import psycopg
from openskill.models import PlackettLuce

from golf.app.boards import (
    ALL_PRESETS,
    RATING_BOARD,
    BoardEntry,
    Period,
    match_entries,
    rating_entry,
    rounds_board,
)
from golf.app.recording import BOT_RATINGS
from golf.app.records import layout_to_text
from golf.app.rounds import PAR_PER_HOLE
from golf.engine.shuffle import ALGORITHM, commitment
from golf.engine.solitaire.rules import PRESET_VERSION, PRESETS
from golf.engine.solitaire.state import Layout

PRESET = "standard"
OWN_ISSUER = "golf"
PORTAL_ISSUER = "https://portal.example"
HOLES = 9
CARD_PRESETS = {"six-card": 6.0, "four-card": 1.5, "nine-card": 1.5, "eight-card": 1.0}
BOT_LEVELS = {"random": 0.2, "greedy": 0.5, "strong": 0.3}
BOT_PER_HOLE = {"random": 14.0, "greedy": 9.0, "strong": 6.0}
"""A bot's mean points per card Golf hole, by level (people: 3 to 16, about 9)."""
DAY_MS = 86_400_000
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
NULL = "\\N"


@dataclass(frozen=True)
class Shape:
    games: int = 1_000_000
    players: int = 10_000
    deals: int = 0
    """0: 3% of the games (30,000 for 1,000,000)."""
    days: int = 180
    round_share: float = 0.10
    daily_share: float = 0.30
    matches: int = -1
    """-1: one per 20 games."""
    card_players: int = -1
    """-1: 30% of the players."""
    seed: int = 1

    def resolved(self) -> Shape:
        deals = self.deals or max(50, self.games * 3 // 100)
        days = min(self.days, max(1, deals // 4))
        matches = self.games // 20 if self.matches < 0 else self.matches
        card = self.players * 3 // 10 if self.card_players < 0 else self.card_players
        return Shape(
            self.games, self.players, deals, days, self.round_share, self.daily_share, matches, max(2, card), self.seed
        )


@dataclass(slots=True)
class _Deal:
    id: str
    created_ms: int
    p_win: float
    day: str | None
    plays: int = 0
    wins: int = 0
    score_sum: int = 0
    duration_sum: int = 0


@dataclass(slots=True)
class _Game:
    id: str
    deal: int
    player: int
    created_ms: int
    finished_ms: int
    score: int
    hints: int
    undos: int
    auto: int
    practice: bool
    round: int = -1
    hole: int = 0

    @property
    def moves(self) -> int:
        """Moves in effect: 35 column plays and 16 draws, less what is left (``score`` below 0: stock left)."""
        return 51 + self.score if self.score <= 0 else 51 - self.score


@dataclass(slots=True)
class _Round:
    id: str
    player: int
    created_ms: int
    games: list[int] = field(default_factory=list)


@dataclass(slots=True)
class _Match:
    id: str
    preset: str
    holes: int
    created: datetime
    at: datetime
    seats: list[tuple[int, str]]
    """Per seat: the person (a player index) or -1 and a bot level."""
    totals: list[int]
    moves: list[int]
    completed: bool


@dataclass
class Loaded:
    """What ``load`` wrote, and how long each step took."""

    now: datetime
    rows: dict[str, int]
    seconds: dict[str, float]
    practice_games: int = 0
    round_count: int = 0


def _ts(ms: int) -> str:
    return (EPOCH + timedelta(milliseconds=ms)).isoformat(sep=" ")


def _b(flag: bool) -> str:
    return "t" if flag else "f"


def _n(value: object | None) -> str:
    return NULL if value is None else str(value)


class _Maker:
    """The generated data set, in memory (about 0.5 GB for a million games)."""

    def __init__(self, shape: Shape, now: datetime) -> None:
        self.shape = shape
        self.rng = random.Random(shape.seed)
        self.now = now
        self.now_ms = int((now - EPOCH) / timedelta(milliseconds=1))
        self.start_ms = self.now_ms - shape.days * DAY_MS
        self.player_ids: list[str] = []
        self.issuers: list[str] = []
        self.player_cw: list[float] = []
        self.deals: list[_Deal] = []
        self.deal_cw: list[float] = []
        self.daily: list[int] = []
        self.daily_cw: list[float] = []
        self.games: list[_Game] = []
        self.rounds: list[_Round] = []
        self.matches: list[_Match] = []
        self.scored: set[tuple[int, int]] = set()
        self.practice = 0

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    # -- players and deals ----------------------------------------------------------------------------------------
    def make_players(self) -> None:
        n, rng = self.shape.players, self.rng
        raw = [rng.paretovariate(1.2) for _ in range(n)]
        scale = self.shape.games / sum(raw)
        cap = max(50.0, self.shape.games * 0.015)
        weights = [min(cap, w * scale) for w in raw]
        self.player_cw = _cumulative(weights)
        for i in range(n):
            self.player_ids.append(self.uuid())
            self.issuers.append(PORTAL_ISSUER if i % 10 == 9 else OWN_ISSUER)

    def make_deals(self) -> None:
        shape, rng = self.shape, self.rng
        first_day = (self.now - timedelta(days=shape.days - 1)).date()
        for d in range(shape.days):
            day = first_day + timedelta(days=d)
            day_ms = int((datetime(day.year, day.month, day.day, tzinfo=UTC) - EPOCH) / timedelta(milliseconds=1))
            self.daily.append(len(self.deals))
            created = day_ms - rng.randint(3_600_000, 2 * DAY_MS)
            self.deals.append(_Deal(self.uuid(), created, rng.betavariate(2, 4.5), day.isoformat()))
        for _ in range(shape.deals - shape.days):
            created = rng.randint(self.start_ms - 10 * DAY_MS, self.now_ms - DAY_MS)
            self.deals.append(_Deal(self.uuid(), created, rng.betavariate(2, 4.5), None))
        self.daily_cw = _cumulative([rng.lognormvariate(0, 0.5) for _ in self.daily])
        others = list(range(len(self.daily), len(self.deals)))
        rng.shuffle(others)
        weights = [0.0] * len(self.deals)
        for rank, index in enumerate(others):
            weights[index] = 1 / (rank + 50)
        self.deal_cw = _cumulative(weights)

    # -- solitaire ------------------------------------------------------------------------------------------------
    def _play(self, deal: _Deal) -> tuple[int, int, int, int, int]:
        """(score, duration ms, hints, undos, AutoPlay runs the solver chose) of one finished game."""
        rng = self.rng
        if rng.random() < deal.p_win:
            score = -min(16, int(rng.expovariate(1 / 2.5)))
        else:
            score = min(35, 1 + int(rng.expovariate(1 / 6)))
        took = int(min(1_200_000, max(30_000, rng.lognormvariate(math.log(200_000), 0.6))))
        hints = 0 if rng.random() < 0.75 else 1 + int(rng.expovariate(1 / 1.5))
        undos = 0 if rng.random() < 0.55 else min(20, 1 + int(rng.expovariate(1 / 2.5)))
        auto = 0 if rng.random() < 0.85 else rng.randint(1, 3)
        return score, took, hints, undos, auto

    def _add_game(self, deal: int, player: int, finished_ms: int, **extra: int) -> _Game:
        score, took, hints, undos, auto = self._play(self.deals[deal])
        practice = (deal, player) in self.scored
        if practice:
            self.practice += 1
        else:
            self.scored.add((deal, player))
        start = extra.pop("created_ms", finished_ms - took)
        game = _Game(self.uuid(), deal, player, start, start + took, score, hints, undos, auto, practice, **extra)
        self.games.append(game)
        return game

    def make_rounds(self) -> None:
        shape, rng = self.shape, self.rng
        count = int(shape.games * shape.round_share / HOLES)
        players = rng.choices(range(shape.players), cum_weights=self.player_cw, k=count)
        for player in players:
            round_ = _Round(self.uuid(), player, rng.randint(self.start_ms, self.now_ms - 6 * 3_600_000))
            at = round_.created_ms + rng.randint(200, 2_000)
            for hole in range(1, HOLES + 1):
                deal = self._fresh_deal(player, at)
                game = self._add_game(deal, player, 0, created_ms=at, round=len(self.rounds), hole=hole)
                round_.games.append(len(self.games) - 1)
                at = game.finished_ms + rng.randint(2_000, 30_000)
            self.rounds.append(round_)

    def _fresh_deal(self, player: int, at: int) -> int:
        """A deal (not a daily one) dealt before ``at`` that ``player`` has not scored, drawn by popularity."""
        for _ in range(40):
            deal = self.rng.choices(range(len(self.deals)), cum_weights=self.deal_cw)[0]
            if self.deals[deal].created_ms < at and (deal, player) not in self.scored:
                return deal
        for _ in range(1000):
            deal = self.rng.randrange(len(self.daily), len(self.deals))
            if self.deals[deal].created_ms < at and (deal, player) not in self.scored:
                return deal
        return self.rng.randrange(len(self.daily), len(self.deals))  # a practice game, then

    def make_games(self) -> None:
        shape, rng = self.shape, self.rng
        count = max(0, shape.games - len(self.games))
        players = rng.choices(range(shape.players), cum_weights=self.player_cw, k=count)
        daily_count = int(count * shape.daily_share)
        deals = rng.choices(self.daily, cum_weights=self.daily_cw, k=daily_count)
        deals += rng.choices(range(len(self.deals)), cum_weights=self.deal_cw, k=count - daily_count)
        for player, drawn in zip(players, deals, strict=True):
            deal = drawn
            for _ in range(3):  # a player mostly plays deals they have not scored (else: a practice game)
                if (deal, player) not in self.scored:
                    break
                deal = rng.choices(range(len(self.deals)), cum_weights=self.deal_cw)[0]
            info = self.deals[deal]
            if info.day is not None:  # played on its day, mostly in its first hours
                day = datetime.fromisoformat(info.day).replace(tzinfo=UTC)
                begin = int((day - EPOCH) / timedelta(milliseconds=1))
                finished = begin + 1_200_000 + min(int(rng.expovariate(1 / (8 * 3_600_000))), 3 * DAY_MS)
            else:
                finished = rng.randint(max(info.created_ms, self.start_ms) + 1_200_000, self.now_ms)
            finished = min(finished, self.now_ms - rng.randint(1_000, 600_000))
            self._add_game(deal, player, finished)
        for game in self.games:
            deal_ = self.deals[game.deal]
            deal_.plays += 1
            deal_.wins += game.score <= 0
            deal_.score_sum += game.score
            deal_.duration_sum += game.finished_ms - game.created_ms

    # -- card Golf ------------------------------------------------------------------------------------------------
    def make_matches(self) -> None:
        shape, rng = self.shape, self.rng
        people = rng.sample(range(shape.players), min(shape.players, shape.card_players))
        weights = _cumulative([rng.paretovariate(1.3) for _ in people])
        skill = {p: min(16.0, max(3.0, rng.gauss(9.0, 2.5))) for p in people}
        presets, preset_w = list(CARD_PRESETS), list(CARD_PRESETS.values())
        levels, level_w = list(BOT_LEVELS), list(BOT_LEVELS.values())
        for _ in range(shape.matches):
            seats = rng.choices((2, 3, 4), (4, 3, 3))[0]
            humans = 1 + sum(rng.random() < 0.6 for _ in range(seats - 1))
            chosen: list[int] = []
            while len(chosen) < min(humans, len(people)):
                p = people[rng.choices(range(len(people)), cum_weights=weights)[0]]
                if p not in chosen:
                    chosen.append(p)
            order: list[tuple[int, str]] = [(p, "") for p in chosen]
            order += [(-1, rng.choices(levels, level_w)[0]) for _ in range(seats - len(chosen))]
            rng.shuffle(order)
            holes = 9 if rng.random() < 0.7 else 18
            totals = []
            for person, level in order:
                mean = skill[person] if person >= 0 else BOT_PER_HOLE[level]
                totals.append(round(rng.gauss(mean * holes, 5 * math.sqrt(holes))))
            created_ms = rng.randint(self.start_ms, self.now_ms - 3 * 3_600_000)
            at_ms = created_ms + holes * rng.randint(60_000, 150_000)
            self.matches.append(
                _Match(
                    self.uuid(),
                    rng.choices(presets, preset_w)[0],
                    holes,
                    EPOCH + timedelta(milliseconds=created_ms),
                    EPOCH + timedelta(milliseconds=at_ms),
                    order,
                    totals,
                    [holes * rng.randint(2, 4) for _ in order],
                    rng.random() < 0.94,
                )
            )
        self.matches.sort(key=lambda m: m.at)

    # -- rows -----------------------------------------------------------------------------------------------------
    def player_rows(self) -> Iterator[str]:
        created = _ts(self.start_ms - 30 * DAY_MS)
        for i, (pid, issuer) in enumerate(zip(self.player_ids, self.issuers, strict=True)):
            subject = f"user-{i}" if issuer != OWN_ISSUER else NULL
            yield f"{pid}\tPlayer {i}\t{created}\t{issuer}\t{subject}\n"

    def deal_rows(self) -> Iterator[str]:
        rules = PRESETS[PRESET]
        canonical = rules.canonical()
        for i, deal in enumerate(self.deals):
            seed = f"{self.shape.seed:x}{i:08x}{deal.id[:8]}"
            layout = layout_to_text(Layout.from_seed(rules, seed))
            check = commitment(ALGORITHM, seed, canonical)
            yield (
                f"{deal.id}\t{PRESET}\t{PRESET_VERSION}\t{canonical}\t{seed}\t{ALGORITHM}\t{check}\t{layout}\t\\N\t"
                f"{_ts(deal.created_ms)}\t\\N\t\\N\t\\N\t\\N\t\\N\tserver\n"
            )

    def daily_rows(self) -> Iterator[str]:
        for index in self.daily:
            yield f"{self.deals[index].day}\t{PRESET}\t{self.deals[index].id}\n"

    def round_rows(self) -> Iterator[str]:
        canonical = PRESETS[PRESET].canonical()
        for r in self.rounds:
            owner, par = self.player_ids[r.player], PAR_PER_HOLE * HOLES
            yield f"{r.id}\t{PRESET}\t{canonical}\t{HOLES}\t{par}\tt\t\\N\t{_ts(r.created_ms)}\t{owner}\n"

    def game_rows(self) -> Iterator[str]:
        for g in self.games:
            deal = self.deals[g.deal]
            status = "won" if g.score <= 0 else "lost"
            finished = _ts(g.finished_ms)
            round_id, hole = (self.rounds[g.round].id, str(g.hole)) if g.round >= 0 else (NULL, NULL)
            holds = deal.day is None
            yield (
                f"{g.id}\t{deal.id}\t{g.moves + 2 * g.undos}\t{status}\t{g.score}\t\t{_ts(g.created_ms)}\t{finished}\t"
                f"{finished}\t{g.hints}\t{g.undos}\t{round_id}\t{hole}\t{self.player_ids[g.player]}\t"
                f"{_b(g.practice)}\t{_b(holds)}\t{g.auto}\n"
            )

    def record_rows(self) -> Iterator[str]:
        """Every record, in finishing order: the ids number each player's records in the order they committed."""
        order: list[tuple[int, int, int]] = [(g.finished_ms, 0, i) for i, g in enumerate(self.games)]
        order += [(self.games[r.games[-1]].finished_ms, 1, i) for i, r in enumerate(self.rounds)]
        order += [(int((m.at - EPOCH) / timedelta(milliseconds=1)), 2, i) for i, m in enumerate(self.matches)]
        order.sort()
        for _, source, index in order:
            if source == 0:
                yield self._game_record(self.games[index])
            elif source == 1:
                yield self._round_record(self.rounds[index])
            else:
                yield from self._match_records(self.matches[index])

    def _game_record(self, g: _Game) -> str:
        p = g.player
        result = "won" if g.score <= 0 else "lost"
        return (
            f"{self.player_ids[p]}\t{self.issuers[p]}\tgame\t{g.id}\tt\t{PRESET}\t{result}\t{g.score}\t\\N\t\\N\t\\N\t"
            f"1\t{g.moves}\t{g.hints + g.auto}\t{g.undos}\t{g.finished_ms - g.created_ms}\t{_ts(g.created_ms)}\t"
            f"{_ts(g.finished_ms)}\t{self.deals[g.deal].id}\t{_b(not g.practice)}\n"
        )

    def _round_totals(self, r: _Round) -> tuple[int, int, int, int, int, bool]:
        """(score, moves, hints, undos, finished ms, rated) of a round."""
        games = [self.games[i] for i in r.games]
        return (
            sum(g.score for g in games),
            sum(g.moves for g in games),
            sum(g.hints + g.auto for g in games),
            sum(g.undos for g in games),
            games[-1].finished_ms,
            all(not g.practice for g in games),
        )

    def _round_record(self, r: _Round) -> str:
        score, moves, hints, undos, finished, rated = self._round_totals(r)
        p, par = r.player, PAR_PER_HOLE * HOLES
        result = "won" if score <= par else "lost"
        return (
            f"{self.player_ids[p]}\t{self.issuers[p]}\tround\t{r.id}\tt\t{PRESET}\t{result}\t{score}\t{par}\t\\N\t"
            f"\\N\t{HOLES}\t{moves}\t{hints}\t{undos}\t{finished - r.created_ms}\t{_ts(r.created_ms)}\t"
            f"{_ts(finished)}\t\\N\t{_b(rated)}\n"
        )

    def _match_records(self, m: _Match) -> Iterator[str]:
        people = [(s, p) for s, (p, _) in enumerate(m.seats) if p >= 0]
        took = int((m.at - m.created) / timedelta(milliseconds=1))
        rated = m.completed and len(m.seats) >= 2
        for n, (seat, p) in enumerate(people):
            mine = m.totals[seat]
            place = 1 + sum(t < mine for t in m.totals)
            shared = sum(t == mine for t in m.totals) > 1
            result = "lost" if place > 1 else "drawn" if shared else "won"
            yield (
                f"{self.player_ids[p]}\t{self.issuers[p]}\tmatch\t{m.id}\t{_b(n == 0)}\t{m.preset}\t{result}\t{mine}\t"
                f"\\N\t{place}\t{len(m.seats)}\t{m.holes}\t{m.moves[seat]}\t0\t0\t{took}\t{m.created.isoformat()}\t"
                f"{m.at.isoformat()}\t\\N\t{_b(rated)}\n"
            )

    def board_rows(self) -> Iterator[str]:
        """Deal boards (one entry per scored game), rounds boards (each player's best), then the card Golf boards;
        in board order, which makes the index builds mostly appends."""
        scored = [g for g in self.games if not g.practice]
        scored.sort(key=lambda g: (g.deal, g.score, g.finished_ms - g.created_ms, g.hints + g.auto + g.undos))
        for g in scored:
            p = g.player
            took, assists = g.finished_ms - g.created_ms, g.hints + g.auto + g.undos
            yield (
                f"deal:{self.deals[g.deal].id}\t{self.player_ids[p]}\t{self.issuers[p]}\t{g.score}\t{took}\t{assists}\t"
                f"{_ts(g.finished_ms)}\t0\t{g.id}\t{g.score}\t{took}\t{assists}\t0\t0\t0\t0\t0.0\t0.0\n"
            )
        best: dict[tuple[str, int], tuple[int, int, int, int, str, str]] = {}
        for r in self.rounds:
            score, _, hints, undos, finished, _ = self._round_totals(r)
            at = EPOCH + timedelta(milliseconds=finished)
            key = (score, finished - r.created_ms, hints + undos, finished, self.player_ids[r.player], r.id)
            for period in Period:
                board = rounds_board(HOLES, PRESET, period, at)
                held = best.get((board, r.player))
                if held is None or key[:5] < held[:5]:
                    best[(board, r.player)] = key
        for (board, p), (score, took, assists, finished, pid, rid) in sorted(best.items()):
            yield (
                f"{board}\t{pid}\t{self.issuers[p]}\t{score}\t{took}\t{assists}\t{_ts(finished)}\t0\t{rid}\t{score}\t"
                f"{took}\t{assists}\t0\t0\t0\t0\t0.0\t0.0\n"
            )
        for e in sorted(self._card_entries().values(), key=lambda e: (e.board, e.key)):
            yield (
                f"{e.board}\t{e.player_id}\t{e.issuer}\t{e.k1}\t{e.k2}\t{e.k3}\t{e.reached_at.isoformat()}\t"
                f"{e.qualifier}\t{_n(e.record_id)}\t{e.score}\t{e.duration_ms}\t{e.assists}\t{e.matches}\t{e.wins}\t"
                f"{e.holes}\t{e.points}\t{e.mu!r}\t{e.sigma!r}\n"
            )

    def _card_entries(self) -> dict[tuple[str, str], BoardEntry]:
        """The ``wins``, ``pph`` and ``rating`` entries after every rated match, in finishing order."""
        model = PlackettLuce()
        held: dict[tuple[str, str], BoardEntry] = {}
        for m in self.matches:
            if not (m.completed and len(m.seats) >= 2):
                continue
            teams, people = [], []
            for seat, (p, level) in enumerate(m.seats):
                if p >= 0:
                    pid = self.player_ids[p]
                    people.append((seat, p, pid))
                    old = held.get((RATING_BOARD, pid))
                    teams.append([model.rating() if old is None else model.rating(old.mu, old.sigma)])
                else:
                    teams.append([model.rating(*BOT_RATINGS[level])])
            rated = model.rate(teams, ranks=[float(t) for t in m.totals])
            for seat, p, pid in people:
                mine = m.totals[seat]
                won = sum(t < mine for t in m.totals) == 0 and sum(t == mine for t in m.totals) == 1
                for suffix in (m.preset, ALL_PRESETS):
                    wins_key, points_key = (f"wins:{suffix}", pid), (f"pph:{suffix}", pid)
                    wins, points = match_entries(
                        held.get(wins_key), held.get(points_key), suffix, pid, self.issuers[p], won, m.holes, mine, m.at
                    )
                    held[wins_key], held[points_key] = wins, points
                new = rated[seat][0]
                old = held.get((RATING_BOARD, pid))
                held[(RATING_BOARD, pid)] = rating_entry(old, pid, self.issuers[p], new.mu, new.sigma, m.at)
        return held

    def deal_stat_rows(self) -> Iterator[str]:
        for d in self.deals:
            if d.plays:
                ppm = d.wins * 1_000_000 // d.plays
                sums = f"{d.plays}\t{d.wins}\t{d.score_sum}\t{d.duration_sum}"
                yield f"{d.id}\t{PRESET}\t{sums}\t{ppm}\t{1_000_000 - ppm}\t{-d.plays}\n"


def _cumulative(weights: list[float]) -> list[float]:
    out, total = [], 0.0
    for w in weights:
        total += w
        out.append(total)
    return out


def _copy(conn: psycopg.Connection, table: str, columns: str, rows: Iterable[str]) -> int:
    """COPY ``rows`` (lines of tab-separated text) into ``table``, committed; the row count."""
    count = 0
    with conn.cursor() as cur, cur.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        chunk: list[str] = []
        for line in rows:
            chunk.append(line)
            if len(chunk) == 20_000:
                copy.write("".join(chunk))
                count += len(chunk)
                chunk.clear()
        copy.write("".join(chunk))
        count += len(chunk)
    conn.commit()
    return count


TABLES: list[tuple[str, str, Callable[[_Maker], Iterable[str]]]] = [
    ("players", "id, display_name, created_at, issuer, subject", _Maker.player_rows),
    (
        "deals",
        "id, preset, preset_version, rules, seed, algorithm, commitment, layout, pysol_number, created_at, "
        "winnable, solution, fewest_left, difficulty, difficulty_score, seed_source",
        _Maker.deal_rows,
    ),
    ("daily_deals", "day, preset, deal_id", _Maker.daily_rows),
    ("rounds", "id, preset, rules, holes, par, winnable_only, difficulty, created_at, owner_id", _Maker.round_rows),
    (
        "games",
        "id, deal_id, version, status, score, line, created_at, updated_at, finished_at, hints_used, undos_used, "
        "round_id, hole, owner_id, practice, holds_deal, autoplay_assists",
        _Maker.game_rows,
    ),
    (
        "records",
        "player_id, issuer, kind, record_id, lead, preset, result, score, par, place, players, holes, moves, hints, "
        "undos, duration_ms, started_at, finished_at, deal_id, rated",
        _Maker.record_rows,
    ),
    (
        "board_entries",
        "board, player_id, issuer, k1, k2, k3, reached_at, qualifier, record_id, score, duration_ms, assists, "
        "matches, wins, holes, points, mu, sigma",
        _Maker.board_rows,
    ),
    (
        "deal_stats",
        "deal_id, preset, plays, wins, score_sum, duration_ms_sum, win_ppm, loss_ppm, neg_plays",
        _Maker.deal_stat_rows,
    ),
]


def load(url: str, shape: Shape, now: datetime, vacuum: bool = True, say: Callable[[str], None] = print) -> Loaded:
    """Generate ``shape``'s data ending at ``now`` and COPY it into the (migrated, empty) database at ``url``
    (a plain ``postgresql://`` URL), then ``VACUUM (ANALYZE)`` (or only ``ANALYZE``)."""
    shape = shape.resolved()
    seconds: dict[str, float] = {}
    began = time.perf_counter()
    maker = _Maker(shape, now)
    maker.make_players()
    maker.make_deals()
    maker.make_rounds()
    maker.make_games()
    maker.make_matches()
    seconds["generate"] = time.perf_counter() - began
    say(
        f"generated {len(maker.games):,} games ({maker.practice:,} practice, {len(maker.rounds):,} rounds), "
        f"{len(maker.deals):,} deals ({len(maker.daily)} daily), {shape.players:,} players, "
        f"{len(maker.matches):,} card Golf matches in {seconds['generate']:.1f} s"
    )
    rows: dict[str, int] = {}
    with psycopg.connect(url) as conn:
        conn.execute("SET synchronous_commit = off")
        for table, columns, make in TABLES:
            t0 = time.perf_counter()
            rows[table] = _copy(conn, table, columns, make(maker))
            seconds[table] = time.perf_counter() - t0
            say(f"  COPY {table}: {rows[table]:,} rows in {seconds[table]:.1f} s")
    with psycopg.connect(url, autocommit=True) as conn:
        t0 = time.perf_counter()
        conn.execute("VACUUM (ANALYZE)" if vacuum else "ANALYZE")
        seconds["vacuum_analyze" if vacuum else "analyze"] = time.perf_counter() - t0
    seconds["total"] = time.perf_counter() - began
    return Loaded(now, rows, seconds, maker.practice, len(maker.rounds))


def table_sizes(url: str) -> list[tuple[str, int, int, int]]:
    """(table, rows estimated by ANALYZE, heap bytes, index bytes) of the tables the record queries read."""
    names = [t for t, _, _ in TABLES]
    with psycopg.connect(url) as conn:
        found = conn.execute(
            "SELECT c.relname, c.reltuples::bigint, pg_table_size(c.oid), pg_indexes_size(c.oid) FROM pg_class c "
            "WHERE c.relname = ANY(%s) AND c.relkind = 'r' ORDER BY pg_total_relation_size(c.oid) DESC",
            (names,),
        ).fetchall()
    return [(str(r[0]), int(r[1]), int(r[2]), int(r[3])) for r in found]


def index_sizes(url: str, names: list[str]) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        found = conn.execute(
            "SELECT relname, pg_relation_size(oid) FROM pg_class WHERE relname = ANY(%s)", (names,)
        ).fetchall()
    return {str(r[0]): int(r[1]) for r in found}
