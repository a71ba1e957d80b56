"""The options a table is created with: the rules (a preset, with house rules by name and options changed one by
one), the number of seats, the holes of the match, whether it is listed or private behind a join code, its turn
clock, the pace of its bots and (for quick play) when bots fill its empty seats."""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from golf.app.errors import InvalidArgument
from golf.app.quoting import shown
from golf.engine.cardgolf.house_rules import HouseRuleError, apply_house_rules
from golf.engine.cardgolf.presets import PRESETS
from golf.engine.cardgolf.rules import MAX_PLAYERS, MIN_PLAYERS, GolfRules

MIN_SEATS, MAX_SEATS = MIN_PLAYERS, MAX_PLAYERS
MIN_HOLES, MAX_HOLES = 1, 18
DEFAULT_PRESET = "six-card"
JOIN_CODE = re.compile(r"[A-Z0-9]{4,16}")
"""A join code: 4 to 16 letters and digits, compared without regard to case (it is stored upper case)."""
MIN_TURN_SECONDS, MAX_TURN_SECONDS = 5, 30 * 24 * 3600
"""A turn clock runs from 5 seconds (a quick game) to 30 days (friends playing by correspondence)."""
MIN_MISSED_TURNS, MAX_MISSED_TURNS = 1, 100
DEFAULT_MISSED_TURNS = 3
MISSED_ACTIONS = ("bot", "resign")
"""What a seat's player who misses ``missed_turns_limit`` turns in a row gets: ``bot``, a greedy bot plays the
seat until the player acts again (the seat is *away*); ``resign``, the player resigns."""
MAX_BOT_DELAY_MS = 30_000
MAX_AUTOFILL_SECONDS = 600
"""Quick play waits at most 10 minutes for people before bots fill the empty seats."""


@dataclass(frozen=True, slots=True)
class TableOptions:
    """What a table is. Build it with :meth:`build`, which validates; ``rules.holes`` is the match length."""

    preset: str
    """The preset the rules start from (``rules`` may differ from it by the options changed)."""
    rules: GolfRules
    seats: int
    join_code: str | None = None
    """``None``: the table is listed; otherwise it is private and joined with this code."""
    turn_seconds: int | None = None
    """The turn clock: a person whose move is awaited this long gets the timeout action (``None``: no clock)."""
    missed_turns_limit: int = DEFAULT_MISSED_TURNS
    """Turns missed in a row after which ``missed_action`` is taken."""
    missed_action: str = "bot"
    """``bot`` or ``resign`` (see :data:`MISSED_ACTIONS`)."""
    bot_delay_ms: int = 0
    """Bots wait this long before each move, to look human (0: they move in the same write as the move before)."""
    autofill_seconds: int | None = None
    """Quick play: after this long seating players, greedy bots fill every empty seat and the match starts
    (``None``: the creator starts the match)."""

    @property
    def holes(self) -> int:
        """Holes in the match."""
        return self.rules.holes

    @property
    def listed(self) -> bool:
        """Whether the table appears in the list of open tables (private tables do not)."""
        return self.join_code is None

    @property
    def clocked(self) -> bool:
        """Whether anything can ever fall due at this table by time alone (a turn clock, paced bots, autofill): a
        table without any of them is only changed by its players' requests."""
        return self.turn_seconds is not None or self.bot_delay_ms > 0 or self.autofill_seconds is not None

    @property
    def custom(self) -> bool:
        """Whether the rules differ from the preset's in anything but the number of holes."""
        return self.rules.with_options(holes=PRESETS[self.preset].holes) != PRESETS[self.preset]

    def code_matches(self, code: str | None) -> bool:
        """Whether ``code`` opens this table (always true for a listed table)."""
        if self.join_code is None:
            return True
        given = (code or "").strip().upper().encode()
        return hmac.compare_digest(given, self.join_code.encode())

    @classmethod
    def build(
        cls,
        preset: str = DEFAULT_PRESET,
        rules: Mapping[str, Any] | None = None,
        seats: int = 4,
        holes: int | None = None,
        join_code: str | None = None,
        *,
        turn_seconds: int | None = None,
        missed_turns_limit: int = DEFAULT_MISSED_TURNS,
        missed_action: str = "bot",
        bot_delay_ms: int = 0,
        autofill_seconds: int | None = None,
        house_rules: Sequence[str] = (),
    ) -> TableOptions:
        """Validated options: the preset ``preset`` with the ``house_rules`` applied in order (names of
        ``golf.engine.cardgolf.house_rules.HOUSE_RULES``), then the rule options ``rules`` changed (names and values
        as in ``GolfRules.from_dict``; they win over the house rules), ``seats`` seats (2 to 8, and no more than the
        decks can deal), ``holes`` holes (1 to 18; by default the rules' own), private behind ``join_code`` when
        one is given; a turn clock of ``turn_seconds`` (5 s to 30 days) with ``missed_action`` (``bot`` or
        ``resign``) after ``missed_turns_limit`` (1 to 100) missed turns in a row; bots paced by ``bot_delay_ms`` (0
        to 30,000); quick play's ``autofill_seconds`` (0 to 600). Raises ``InvalidArgument`` naming the field as a
        request names it (proto3 JSON: ``turnClock.turnTime``, ``turnClock.missedTurnsLimit``,
        ``turnClock.action``, ``botDelay``, ``wait``; ``houseRules[i]`` for an unknown or repeated name, or one
        that conflicts with a name before it)."""
        base = PRESETS.get(preset)
        if base is None:
            raise InvalidArgument("preset", f"unknown preset {shown(preset)}; choose one of {', '.join(PRESETS)}")
        if isinstance(house_rules, str):  # one name is not a list of its letters
            raise InvalidArgument("houseRules", "house rules are a list of names")
        try:
            base = apply_house_rules(base, house_rules)
        except HouseRuleError as err:
            field_name = "houseRules" if err.index is None else f"houseRules[{err.index}]"
            raise InvalidArgument(field_name, str(err)) from None
        try:
            chosen = base.with_options(**dict(rules or {}))
        except (ValueError, TypeError) as err:
            raise InvalidArgument("rules", f"rule options: {err}") from None
        if holes is None:
            holes = chosen.holes
        if not MIN_HOLES <= holes <= MAX_HOLES:
            raise InvalidArgument("holes", f"a match has {MIN_HOLES} to {MAX_HOLES} holes")
        chosen = chosen.with_options(holes=holes)
        if not MIN_SEATS <= seats <= MAX_SEATS:
            raise InvalidArgument("seats", f"a table has {MIN_SEATS} to {MAX_SEATS} seats")
        code = None
        if join_code is not None:
            code = join_code.strip().upper()
            if not JOIN_CODE.fullmatch(code):
                raise InvalidArgument("joinCode", "a join code has 4 to 16 letters and digits")
        options = cls(
            preset,
            chosen,
            seats,
            code,
            turn_seconds=turn_seconds,
            missed_turns_limit=missed_turns_limit,
            missed_action=missed_action,
            bot_delay_ms=bot_delay_ms,
            autofill_seconds=autofill_seconds,
        )
        options.validate()
        return options

    def validate(self) -> None:
        """Raise ``InvalidArgument`` naming the field when these options cannot make a match."""
        if self.preset not in PRESETS:
            raise InvalidArgument("preset", f"unknown preset {shown(self.preset)}")
        if not MIN_SEATS <= self.seats <= MAX_SEATS:
            raise InvalidArgument("seats", f"a table has {MIN_SEATS} to {MAX_SEATS} seats")
        if not MIN_HOLES <= self.rules.holes <= MAX_HOLES:
            raise InvalidArgument("holes", f"a match has {MIN_HOLES} to {MAX_HOLES} holes")
        if self.join_code is not None and not JOIN_CODE.fullmatch(self.join_code):
            raise InvalidArgument("joinCode", "a join code has 4 to 16 letters and digits")
        self._validate_timing()
        try:
            self.rules.validate(self.seats)
        except ValueError as err:
            field_name, _, _ = str(err).partition(":")
            if field_name == "players":
                raise InvalidArgument("seats", str(err)) from None
            # The field is named as in a request, in proto3 JSON (lowerCamelCase) form.
            head, *rest = field_name.split("_")
            raise InvalidArgument("rules." + head + "".join(w.title() for w in rest), str(err)) from None
        except TypeError as err:  # an option of the wrong type, e.g. a string where a number belongs
            raise InvalidArgument("rules", f"rule options: {err}") from None

    def _validate_timing(self) -> None:
        turn = self.turn_seconds
        if turn is not None and (not _whole(turn) or not MIN_TURN_SECONDS <= turn <= MAX_TURN_SECONDS):
            raise InvalidArgument(
                "turnClock.turnTime", f"a turn clock runs {MIN_TURN_SECONDS} seconds to 30 days, in whole seconds"
            )
        if not _whole(self.missed_turns_limit) or not MIN_MISSED_TURNS <= self.missed_turns_limit <= MAX_MISSED_TURNS:
            raise InvalidArgument(
                "turnClock.missedTurnsLimit", f"missed turns limit must be {MIN_MISSED_TURNS} to {MAX_MISSED_TURNS}"
            )
        if self.missed_action not in MISSED_ACTIONS:
            raise InvalidArgument("turnClock.action", f"the missed turns action is one of {', '.join(MISSED_ACTIONS)}")
        if not _whole(self.bot_delay_ms) or not 0 <= self.bot_delay_ms <= MAX_BOT_DELAY_MS:
            raise InvalidArgument("botDelay", f"the bot delay is 0 to {MAX_BOT_DELAY_MS // 1000} seconds")
        fill = self.autofill_seconds
        if fill is not None and (not _whole(fill) or not 0 <= fill <= MAX_AUTOFILL_SECONDS):
            raise InvalidArgument("wait", f"the wait for people is 0 to {MAX_AUTOFILL_SECONDS} seconds")


def _whole(value: object) -> bool:
    """An ``int`` and not a ``bool`` (options come from decoded JSON too)."""
    return type(value) is int
