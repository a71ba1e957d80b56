"""Golf boards in PySolFC's text form, as used by PySolFC's solver export and by black-hole-solver.

::

    Talon: 8H 2C JH 7D 6D 8S 8D QS 6C 3D 8C TC 6S 9C 2H 6H
    Foundations: TH
    JD 5H KH AS 4H
    2D KD 3H AH AC
    ...

``Talon:`` lists the stock in the order it is turned, ``Foundations:`` the pile's top card, and each further line
is one column from the back (dealt first) to the front (playable) card. A mid-game board lists what is left: an
empty column is an empty line (or ``-``). Cards may be written ``10H`` for ``TH``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from golf.engine.cards import Card, parse_cards
from golf.engine.solitaire.rules import SolitaireRules
from golf.engine.solitaire.state import Layout, State

_TALON = "talon:"
_FOUNDATIONS = "foundations:"


def parse_board(text: str) -> Layout:
    """The layout a board shows: its columns, the pile's top card (as ``start``) and the stock.

    Raises ``ValueError`` with a readable message when the text is not a board.
    """
    lines = [line.strip() for line in text.strip().splitlines()]
    talon: list[Card] | None = None
    top: Card | None = None
    columns: list[tuple[Card, ...]] = []
    for number, line in enumerate(lines, start=1):
        lower = line.lower()
        try:
            if lower.startswith(_TALON):
                if talon is not None:
                    raise ValueError("a second Talon: line")
                talon = parse_cards(line[len(_TALON) :].replace("-", " "))
            elif lower.startswith(_FOUNDATIONS):
                if top is not None:
                    raise ValueError("a second Foundations: line")
                pile = parse_cards(line[len(_FOUNDATIONS) :].replace("-", " "))
                if not pile:
                    raise ValueError("the Foundations: line needs the pile's top card")
                top = pile[-1]
            else:
                if talon is None or top is None:
                    raise ValueError("columns must follow the Talon: and Foundations: lines")
                body = line[1:] if line.startswith(":") else line
                columns.append(tuple(parse_cards(body.replace("-", " "))))
        except ValueError as exc:
            raise ValueError(f"board line {number}: {exc}") from None
    if talon is None:
        raise ValueError("the board has no Talon: line")
    if top is None:
        raise ValueError("the board has no Foundations: line")
    if not columns:
        raise ValueError("the board has no columns")
    return Layout(tuple(columns), top, tuple(talon))


def decks_needed(layout: Layout) -> int:
    """How many packs the board's cards need (two copies of a card need two decks)."""
    counts = Counter(layout.all_cards())
    return max(counts.values(), default=1)


def rules_for_board(layout: Layout, rules: SolitaireRules) -> SolitaireRules:
    """``rules`` with the decks, column count and height fitted to a board (the play options are kept)."""
    decks = max(rules.decks, decks_needed(layout))
    height = max((len(col) for col in layout.columns), default=1) or 1
    return replace(rules, decks=decks, columns=len(layout.columns), column_height=height)


def state_from_board(text: str, rules: SolitaireRules) -> State:
    """The position a board shows, to be played or solved under ``rules`` (fitted with :func:`rules_for_board`)."""
    layout = parse_board(text)
    if decks_needed(layout) > 4:
        raise ValueError("the board holds a card more than four times")
    return State.initial(rules_for_board(layout, rules), layout)


def format_board(state: State) -> str:
    """The board of a position in PySolFC's text form (what is left of the columns and the stock)."""
    talon = " ".join(card.code for card in state.layout.stock[state.turned :])
    lines = [f"Talon: {talon}".rstrip(), f"Foundations: {state.top.code}"]
    for col, h in zip(state.layout.columns, state.heights, strict=True):
        lines.append(" ".join(card.code for card in col[:h]) or "-")
    return "\n".join(lines) + "\n"
