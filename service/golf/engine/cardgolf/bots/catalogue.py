"""The catalogue of computer opponents: levels (how well a bot plays) and personalities (how it plays).

A bot's name is a level, or a level and a personality joined by ``+``: ``expert``, ``advanced+gambler``. The
names stored with tables before levels existed stay valid and mean what they meant: ``random``, ``greedy`` (the
``intermediate`` level) and ``strong`` (the ``expert`` level); :func:`canonical_name` writes a name the way it is
stored (``greedy`` rather than ``intermediate``, so a table's seats read the same whichever was asked for).

Every bot decides from its seat's view only (``golf.engine.cardgolf.view``), never from the hidden state.
"""

from __future__ import annotations

from dataclasses import dataclass

SEPARATOR = "+"
"""Joins a level and a personality in a bot's name."""


@dataclass(frozen=True, slots=True)
class LevelInfo:
    """One level of play."""

    name: str
    """The stored name (``make_bot`` also takes the aliases)."""
    rank: int
    """0 (random) to 4 (expert): higher plays better."""
    title: str
    description: str
    aliases: tuple[str, ...] = ()
    cost: int = 1
    """Rough CPU cost of one decision, in greedy decisions (the service budgets a request's bot work with it)."""


@dataclass(frozen=True, slots=True)
class PersonalityInfo:
    """One style of play, on top of a level."""

    name: str
    title: str
    description: str


LEVELS: tuple[LevelInfo, ...] = (
    LevelInfo("random", 0, "Random", "Any legal move, picked at random: a kind of move, then one of its targets."),
    LevelInfo(
        "beginner",
        1,
        "Beginner",
        "Knows the card values and keeps low cards, but one decision in three is a hunch, and it does not look at "
        "the other grids before going out.",
    ),
    LevelInfo(
        "greedy",
        2,
        "Intermediate",
        "The move that lowers its estimated score most, one step ahead; goes out only when it looks lowest.",
        aliases=("intermediate",),
    ),
    LevelInfo(
        "advanced",
        3,
        "Advanced",
        "Plays the rest of the hole out in its head a few times for each good move (a light Monte Carlo search), "
        "with a model of each opponent from what that seat has done.",
        cost=4,
    ),
    LevelInfo(
        "strong",
        4,
        "Expert",
        "Monte Carlo search over the cards it cannot see, many playouts per decision, with each opponent modelled "
        "from its grid (how well it has kept low cards and pairs, how fast it turns cards up).",
        aliases=("expert",),
        cost=10,
    ),
)
"""Every level, weakest first."""

PERSONALITIES: tuple[PersonalityInfo, ...] = (
    PersonalityInfo(
        "pair-hunter",
        "Pair hunter",
        "Builds matched columns: takes and keeps any card that pairs, even a high one, and turns up cards beside "
        "a known partner first.",
    ),
    PersonalityInfo(
        "racer",
        "Racer",
        "Turns cards up fast and goes out (or knocks) as soon as it is not clearly behind.",
    ),
    PersonalityInfo(
        "cautious",
        "Cautious",
        "Takes only sure improvements, replaces known high cards rather than gambling on face-down ones, and goes "
        "out or knocks only with a clear lead.",
    ),
    PersonalityInfo(
        "gambler",
        "Gambler",
        "Swaps into face-down places, keeps middling cards hoping for pairs, and knocks early on a hunch.",
    ),
)
"""Every personality. A bot without one plays its level's own balanced style."""

_LEVEL_BY_NAME: dict[str, LevelInfo] = {n: lv for lv in LEVELS for n in (lv.name, *lv.aliases)}
_PERSONALITY_BY_NAME: dict[str, PersonalityInfo] = {p.name: p for p in PERSONALITIES}

BOT_NAMES: tuple[str, ...] = tuple(lv.name for lv in LEVELS)
"""The stored names of the levels (a personality may be added to any but ``random``)."""


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A parsed bot name."""

    level: LevelInfo
    personality: PersonalityInfo | None

    @property
    def name(self) -> str:
        """The canonical (stored) name."""
        if self.personality is None:
            return self.level.name
        return f"{self.level.name}{SEPARATOR}{self.personality.name}"


def parse_bot_name(name: str) -> BotSpec:
    """The level and personality a bot name asks for; ``ValueError`` naming the choices when it is unknown."""
    level_name, sep, personality_name = name.strip().lower().partition(SEPARATOR)
    level = _LEVEL_BY_NAME.get(level_name)
    if level is None:
        raise ValueError(f"unknown bot level {level_name!r}; known: {', '.join(sorted(_LEVEL_BY_NAME))}")
    if not sep:
        return BotSpec(level, None)
    personality = _PERSONALITY_BY_NAME.get(personality_name)
    if personality is None:
        known = ", ".join(p.name for p in PERSONALITIES)
        raise ValueError(f"unknown bot personality {personality_name!r}; known: {known}")
    if level.rank == 0:
        raise ValueError("the random level has no personality")
    return BotSpec(level, personality)


def is_bot_name(name: str) -> bool:
    """Whether ``name`` names a bot (a level, with or without a personality)."""
    try:
        parse_bot_name(name)
    except ValueError:
        return False
    return True


def canonical_name(name: str) -> str:
    """``name`` as it is stored: aliases replaced by the level's name (``expert+racer`` -> ``strong+racer``)."""
    return parse_bot_name(name).name


def bot_name(level: str, personality: str | None = None) -> str:
    """The canonical name of a level (a name or alias) with an optional personality."""
    return canonical_name(level if not personality else f"{level}{SEPARATOR}{personality}")


def bot_cost(name: str) -> int:
    """The rough CPU cost of one decision of bot ``name`` (1 for a greedy decision; unknown names cost 1)."""
    try:
        return parse_bot_name(name).level.cost
    except ValueError:
        return 1


def catalogue() -> list[tuple[str, int, str]]:
    """Every bot a client may ask for, as (name, level rank, description): each level, then each level with each
    personality."""
    out = [(lv.name, lv.rank, f"{lv.title}: {lv.description}") for lv in LEVELS]
    for lv in LEVELS:
        if lv.rank == 0:
            continue
        for p in PERSONALITIES:
            out.append((BotSpec(lv, p).name, lv.rank, f"{lv.title} {p.title}: {p.description}"))
    return out
