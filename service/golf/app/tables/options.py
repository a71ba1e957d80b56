"""The options a table is created with: the rules (a preset, or a preset with options changed one by one), the
number of seats, the holes of the match, and whether it is listed or private behind a join code."""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from golf.app.errors import InvalidArgument
from golf.app.quoting import shown
from golf.engine.cardgolf.presets import PRESETS
from golf.engine.cardgolf.rules import MAX_PLAYERS, MIN_PLAYERS, GolfRules

MIN_SEATS, MAX_SEATS = MIN_PLAYERS, MAX_PLAYERS
MIN_HOLES, MAX_HOLES = 1, 18
DEFAULT_PRESET = "six-card"
JOIN_CODE = re.compile(r"[A-Z0-9]{4,16}")
"""A join code: 4 to 16 letters and digits, compared without regard to case (it is stored upper case)."""


@dataclass(frozen=True, slots=True)
class TableOptions:
    """What a table is. Build it with :meth:`build`, which validates; ``rules.holes`` is the match length."""

    preset: str
    """The preset the rules start from (``rules`` may differ from it by the options changed)."""
    rules: GolfRules
    seats: int
    join_code: str | None = None
    """``None``: the table is listed; otherwise it is private and joined with this code."""

    @property
    def holes(self) -> int:
        """Holes in the match."""
        return self.rules.holes

    @property
    def listed(self) -> bool:
        """Whether the table appears in the list of open tables (private tables do not)."""
        return self.join_code is None

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
    ) -> TableOptions:
        """Validated options: the preset ``preset`` with the rule options ``rules`` changed (names and values as in
        ``GolfRules.from_dict``), ``seats`` seats (2 to 8, and no more than the decks can deal), ``holes`` holes (1
        to 18; by default the rules' own), private behind ``join_code`` when one is given. Raises
        ``InvalidArgument`` naming the field."""
        base = PRESETS.get(preset)
        if base is None:
            raise InvalidArgument("preset", f"unknown preset {shown(preset)}; choose one of {', '.join(PRESETS)}")
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
        options = cls(preset, chosen, seats, code)
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
