"""Making deals: from a seed or a PySolFC number, winnable ones from a pool refilled in the background, and the
daily deal."""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from dataclasses import dataclass, fields, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from golf.app.errors import DealUnavailable, InvalidArgument, StorageUnavailable
from golf.app.ports import AlreadyStored, Clock, RateLimiter, Solver, UnitOfWorkFactory
from golf.app.quoting import shown
from golf.app.records import DealRecord, Verdict
from golf.engine.shuffle import ALGORITHM, commitment, new_seed
from golf.engine.solitaire.difficulty import Difficulty
from golf.engine.solitaire.rules import PRESET_VERSION, PRESETS, SolitaireRules
from golf.engine.solitaire.state import Layout

PYSOL_ALGORITHM = "pysolfc"
MAX_SEED_LENGTH = 128
DAILY_HISTORY_DAYS = 366
"""How far back daily deals can be asked for (each day asked for is dealt and stored once)."""
RULE_FIELDS = frozenset(f.name for f in fields(SolitaireRules))
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
log = logging.getLogger("golf.dealing")


def day_end(day: date) -> datetime:
    """When a daily deal of ``day`` closes: the end of its UTC day (``golf.app.reveals``)."""
    return datetime.combine(day + timedelta(days=1), time(), UTC)


def resolve_rules(preset: str, overrides: dict[str, Any]) -> tuple[str, SolitaireRules]:
    """The preset's rules with ``overrides`` applied, and the preset name to record ("custom" if changed)."""
    name = preset or "standard"
    base = PRESETS.get(name)
    if base is None:
        raise InvalidArgument("preset", f"unknown preset {shown(name)}; choose one of {', '.join(PRESETS)}")
    unknown = set(overrides) - RULE_FIELDS
    if unknown:
        raise InvalidArgument("rules", f"unknown rule option(s): {', '.join(sorted(unknown))}")
    rules = replace(base, **overrides)
    try:
        rules.validate()
    except ValueError as err:
        field_name, _, _ = str(err).partition(":")
        # The field is named as in the request, in proto3 JSON (lowerCamelCase) form.
        head, *rest = field_name.split("_")
        raise InvalidArgument("rules." + head + "".join(w.title() for w in rest), str(err)) from None
    return (name if rules == base else "custom"), rules


@dataclass
class DealSettings:
    solver_budget: int = 2_000_000
    """Positions per solver call made for a request."""
    search_attempts: int = 60
    """Seeds tried for one winnable deal made on demand."""
    pool_size: int = 30
    """Fresh (never dealt) winnable deals kept ready per preset and difficulty."""
    pool_library: int = 500
    """Deals kept per preset and difficulty, dealt again (least dealt first) when no fresh one is left."""
    pool_presets: tuple[str, ...] = ("standard", "queens-on-kings", "wrap")


class Dealer:
    """Makes and stores deals."""

    def __init__(
        self,
        uow: UnitOfWorkFactory,
        clock: Clock,
        solver: Solver,
        settings: DealSettings,
        limiter: RateLimiter | None = None,
    ) -> None:
        """``limiter`` counts the searches players' requests start; the background refill has none."""
        self.uow = uow
        self.clock = clock
        self.solver = solver
        self.settings = settings
        self.limiter = limiter

    def record(
        self, name: str, rules: SolitaireRules, seed: str, algorithm: str, layout: Layout, **extra: Any
    ) -> DealRecord:
        return DealRecord(
            id=str(uuid.uuid4()),
            preset=name,
            preset_version=PRESET_VERSION,
            rules=rules,
            seed=seed,
            algorithm=algorithm,
            commitment=commitment(algorithm, seed, rules.canonical()),
            layout=layout,
            created_at=self.clock(),
            **extra,
        )

    def plain(self, preset: str, overrides: dict[str, Any], seed: str | None, pysol_number: int | None) -> DealRecord:
        """A deal from a seed (drawn from ``secrets`` when not given) or a PySolFC number; nothing is solved."""
        name, rules = resolve_rules(preset, overrides)
        if pysol_number is not None:
            if seed is not None:
                raise InvalidArgument("seed", "give either seed or pysolDealNumber, not both")
            if not rules.is_pysol_layout():
                raise InvalidArgument("pysolDealNumber", "PySolFC deals need 1 deck in 7 columns of 5")
            try:
                layout = Layout.from_pysol(pysol_number)
            except ValueError as err:
                raise InvalidArgument("pysolDealNumber", str(err)) from None
            return self.record(
                name,
                rules,
                f"pysol:{pysol_number}",
                PYSOL_ALGORITHM,
                layout,
                pysol_number=pysol_number,
                seed_source="pysol",
            )
        source = "client"
        if seed is None:
            seed, source = new_seed(), "server"
        elif not 1 <= len(seed) <= MAX_SEED_LENGTH:
            raise InvalidArgument("seed", f"seed must be 1 to {MAX_SEED_LENGTH} characters")
        return self.record(name, rules, seed, ALGORITHM, Layout.from_seed(rules, seed), seed_source=source)

    async def winnable(
        self, preset: str, overrides: dict[str, Any], difficulty: Difficulty | None, player_id: str
    ) -> DealRecord:
        """A stored deal the solver has proven winnable, for ``player_id``: from the pool when the rules are a
        preset (one short transaction; never a deal the player has played, nor one a game in progress holds),
        else searched now, holding no transaction while the solver works."""
        name, rules = resolve_rules(preset, overrides)
        if name != "custom":
            async with self.uow() as uow:
                deal_id = await uow.deals.pool_take(name, difficulty.value if difficulty else None, player_id)
                pooled = await uow.deals.get_deal(deal_id) if deal_id is not None else None
                await uow.commit()
            if pooled is not None:
                return pooled
        if self.limiter is not None:
            await self.limiter.hit("solver", player_id)
        return await self._search(name, rules, difficulty, player_id)

    async def _search(
        self, name: str, rules: SolitaireRules, difficulty: Difficulty | None, player_id: str
    ) -> DealRecord:
        """A new winnable deal found by the solver now (for ``player_id``), stored."""
        found = await self.solver.find_winnable(
            rules, difficulty, self.settings.solver_budget, self.settings.search_attempts, player_id
        )
        if found is None:
            raise DealUnavailable(
                f"no winnable {difficulty.value + ' ' if difficulty else ''}deal found in "
                f"{self.settings.search_attempts} tries under these rules"
            )
        seed, verdict = found
        deal = self.record(name, rules, seed, ALGORITHM, Layout.from_seed(rules, seed), verdict=verdict)
        async with self.uow() as uow:
            await uow.deals.add_deal(deal)
            await uow.commit()
        return deal

    async def daily(self, day: str, preset: str, player_id: str) -> DealRecord:
        """The deal of ``day`` (YYYY-MM-DD, UTC) for ``preset``: winnable, the same for every player.

        It is a fresh deal taken out of the pool for good (or searched now), so it is never dealt as an ordinary
        game: nobody can have seen it before the day's players. It closes at the day's end: games started on it
        later are practice, and its stock is shown to all once its last ranked game is over."""
        # Only the form the contract names: Python would also take 20261101 and 2026-W48-1.
        if not _DAY.fullmatch(day):
            raise InvalidArgument("date", "date is required, as YYYY-MM-DD (a UTC day)")
        try:
            when = date.fromisoformat(day)
        except ValueError:
            raise InvalidArgument("date", "date must be a real day, as YYYY-MM-DD") from None
        today = self.clock().date()
        if when > today:
            raise InvalidArgument("date", "the daily deal of a future day is not dealt yet")
        if (today - when).days > DAILY_HISTORY_DAYS:
            raise InvalidArgument("date", f"daily deals go back {DAILY_HISTORY_DAYS} days")
        name, rules = resolve_rules(preset, {})
        key = when.isoformat()
        async with self.uow() as uow:
            deal_id = await uow.deals.daily_get(key, name)
            if deal_id is not None:
                deal = await uow.deals.get_deal(deal_id)
                assert deal is not None
                return deal
            claimed = await uow.deals.pool_claim_fresh(name)
            pooled = await uow.deals.get_deal(claimed) if claimed is not None else None
            await uow.commit()
        if pooled is not None:
            deal = pooled
        else:
            if self.limiter is not None:
                await self.limiter.hit("solver", player_id)
            deal = await self._search(name, rules, None, player_id)
        async with self.uow() as uow:
            try:
                await uow.deals.daily_add(key, name, deal.id, day_end(when))
                await uow.commit()
                return deal
            except AlreadyStored:
                pass  # another replica dealt it first: everyone gets that one
        async with self.uow() as uow:
            deal_id = await uow.deals.daily_get(key, name)
            deal_or_none = await uow.deals.get_deal(deal_id) if deal_id else None
        assert deal_or_none is not None
        return deal_or_none

    async def save_verdict(self, deal: DealRecord, verdict: Verdict) -> DealRecord:
        async with self.uow() as uow:
            await uow.deals.save_verdict(deal.id, verdict)
            await uow.commit()
        return replace(deal, verdict=verdict)

    # -- the pool ------------------------------------------------------------------------------------------
    async def refill_once(self) -> int:
        """Add one fresh deal to each preset whose pool lacks fresh deals of some difficulty; the deals added.

        The search takes the first winnable deal whatever its difficulty and files it under its own: throwing
        away deals of the wrong difficulty would cost several times the CPU. A bucket at ``pool_library``
        deals makes room by dropping its most dealt deal; a full bucket of fresh deals takes no more.
        """
        added = 0
        for preset in self.settings.pool_presets:
            rules = PRESETS[preset]
            async with self.uow() as uow:
                counts = {level: await uow.deals.pool_counts(preset, level.value) for level in Difficulty}
            if all(fresh >= self.settings.pool_size for fresh, _ in counts.values()):
                continue
            found = await self.solver.find_winnable(
                rules, None, self.settings.solver_budget, self.settings.search_attempts
            )
            if found is None:
                continue
            seed, verdict = found
            level = Difficulty(verdict.difficulty)
            fresh, total = counts[level]
            if fresh >= self.settings.pool_library:
                continue
            deal = self.record(preset, rules, seed, ALGORITHM, Layout.from_seed(rules, seed), verdict=verdict)
            async with self.uow() as uow:
                if total >= self.settings.pool_library:
                    await uow.deals.pool_evict(preset, level.value, self.clock())
                await uow.deals.add_deal(deal)
                await uow.deals.pool_add(preset, level.value, deal.id)
                await uow.commit()
            added += 1
        return added

    async def refill_forever(self, idle_seconds: float = 2.0) -> None:
        """Keep the pool full; runs until cancelled. Errors are logged and retried later."""
        while True:
            try:
                added = await self.refill_once()
            except asyncio.CancelledError:
                raise
            except StorageUnavailable:
                added = 0  # the outage is logged once where it is noticed; the refill waits for the database
            except Exception:
                log.exception("refilling the deal pool failed")
                added = 0
            if not added:
                await asyncio.sleep(idle_seconds)
