"""Exported games and matches (``golf.app.exports``) to ``golf.v1.Record``, the format ``golf verify`` reads.

Everything in a record is what the rules reveal once a game or match is over: the seed, the whole log, every
seat's points. A record is made only of a finished game or match (the use case loads no other).
"""

from __future__ import annotations

from golf.api.convert import timestamp
from golf.app.exports import FORMAT, Exported, GameExport, MatchExport, table_options_text
from golf.app.tables.records import FORMAT_VERSION as TABLE_FORMAT_VERSION
from golf.app.tables.records import encode_entry
from golf.engine.shuffle import ALGORITHM
from golf.v1 import record_service_pb2 as rpb
from golf.v1 import solitaire_pb2

_GAME_STATUS = {
    "in_progress": solitaire_pb2.GAME_STATUS_IN_PROGRESS,
    "won": solitaire_pb2.GAME_STATUS_WON,
    "lost": solitaire_pb2.GAME_STATUS_LOST,
}


def game_record(item: GameExport) -> rpb.Record:
    """A finished solitaire game: its deal (rules, algorithm, seed, commitment), every entry of its log in order
    (undos and AutoPlay runs included), its score and status."""
    game, deal = item.game, item.deal
    msg = rpb.Record(
        format=FORMAT,
        kind=rpb.RECORD_KIND_SOLITAIRE_GAME,
        id=game.id,
        preset=deal.preset,
        rules_version=deal.preset_version,
        rules=deal.rules.canonical(),
        shuffle_algorithm=deal.algorithm,
        seed=deal.seed,
        commitment=deal.commitment,
        entries=[rpb.RecordEntry(seq=m.seq, code=m.code, time=timestamp(m.created_at)) for m in item.log],
        score=game.score,
        status=_GAME_STATUS.get(game.status, solitaire_pb2.GAME_STATUS_UNSPECIFIED),
        start_time=timestamp(game.created_at),
        finish_time=timestamp(game.finished_at or item.index.finished_at),
        deal_id=deal.id,
        round_id=game.round_id or "",
        hole=game.hole or 0,
        pysol_number=deal.pysol_number or 0,
        player_id=game.owner_id,
    )
    return msg


def match_record(item: MatchExport) -> rpb.Record:
    """A finished card Golf match: its rules and options, the match seed and commitment, every entry of the table's
    log as stored, each seat's points per hole, total and place, and why it ended."""
    options = item.record.options
    end = item.table.end
    return rpb.Record(
        format=FORMAT,
        kind=rpb.RECORD_KIND_CARD_GOLF_MATCH,
        id=item.record.id,
        preset=options.preset,
        # A table stores its rules whole (every option), so no preset version is needed to read them: the version
        # is that of the stored options' format.
        rules_version=TABLE_FORMAT_VERSION,
        rules=options.rules.canonical(),
        shuffle_algorithm=ALGORITHM,
        seed=item.record.seed,
        commitment=item.commitment,
        entries=[
            rpb.RecordEntry(seq=e.seq, code=encode_entry(e.entry), time=timestamp(e.created_at)) for e in item.log
        ],
        seats=[
            rpb.RecordSeat(
                seat=s.seat,
                player_id=s.player_id or "",
                display_name=s.display_name,
                bot=s.bot or "",
                hole_points=s.hole_points,
                total=s.total,
                place=s.place,
            )
            for s in item.seats
        ],
        start_time=timestamp(item.index.started_at),
        finish_time=timestamp(item.index.finished_at),
        table_options=table_options_text(options),
        match_end=end.value if end is not None else "",
    )


def record_to_proto(item: Exported) -> rpb.Record:
    """The record of an exported game or match."""
    return game_record(item) if isinstance(item, GameExport) else match_record(item)


__all__ = ["game_record", "match_record", "record_to_proto"]
