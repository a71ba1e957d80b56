"""Who may do what to a game or a round: one table of rules, used by every use case.

| resource | owner | another player |
| --- | --- | --- |
| game or round in progress | read, play | ``NOT_FOUND`` (saying it exists would leak) |
| finished game or round | read, play (refused by the rules) | read; changing it is ``PERMISSION_DENIED`` |
| stored before players existed (owner ``legacy``) | nobody acts for it | read; changing it is ``PERMISSION_DENIED`` |

Deals are public by id (their layout hides nothing); starting a game on one is decided in ``SolitaireService``.
"""

from __future__ import annotations

from golf.app.errors import NotFound, PermissionDenied
from golf.app.identity import LEGACY_OWNER, Caller


def may_read(caller: Caller, owner_id: str, finished: bool) -> bool:
    """Whether ``caller`` may see a game or round of ``owner_id``."""
    return caller.player_id == owner_id or finished or owner_id == LEGACY_OWNER


def check_read(caller: Caller, owner_id: str, finished: bool, what: str) -> None:
    """Raise ``NotFound`` (as for an unknown id) when ``caller`` may not see it."""
    if not may_read(caller, owner_id, finished):
        raise NotFound(f"no {what}")


def check_owner(caller: Caller, owner_id: str, finished: bool, what: str) -> None:
    """Only the owner changes a game or round: others get ``PermissionDenied`` if they may see it, else
    ``NotFound``."""
    if caller.player_id == owner_id:
        return
    check_read(caller, owner_id, finished, what)
    raise PermissionDenied(f"{what} belongs to another player; only they may play it")
