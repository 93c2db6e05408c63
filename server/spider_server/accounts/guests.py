"""What accounts mean to guests, asked at ``hello`` only (never on a move):

- a guest's token whose player an account took over (signed up from that token) speaks
  for nobody: :class:`~..errors.BadToken`, saying to sign in; nor, once that account is
  deleted, ever again (``deleted_players``);
- a guest may not go by a name whose key (:func:`~..names.check_name`) an account holds:
  :class:`~..errors.InvalidMessage` ``name: belongs to an account: sign in``.

Each is one indexed query (``accounts.player`` and ``deleted_players.player``,
``accounts.name_key``); a takeover is for
good, so the players known taken over are remembered (at most :data:`REMEMBERED`). While
the database does not answer, a guest is let in on both counts (the races go on from
Redis; a takeover this node knows of is still refused), and the node logs it.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Collection

from ..errors import BadToken, InvalidMessage, Unavailable
from ..names import NameRefused, check_name
from ..store import accounts as rows
from ..store.account_erasure import player_deleted
from ..store.archive import ArchiveStore

__all__ = ["DELETED", "REMEMBERED", "Guests"]

log = logging.getLogger(__name__)

REMEMBERED = 10_000
"""Players taken over by accounts that a node remembers (the most recently seen)."""


class Guests:
    """A node's checks of guests against the accounts (``archive`` None: no accounts, and
    every guest passes)."""

    def __init__(self, archive: ArchiveStore | None) -> None:
        self.archive = archive
        self._taken: OrderedDict[str, str] = OrderedDict()

    def taken_over(self, player: str, *, why: str | None = None) -> None:
        """Remember that an account races as ``player`` now, a guest's no more (``why``:
        what its guest's token is told; by default, to sign in to the account)."""
        self._taken[player] = why or _TAKEN
        self._taken.move_to_end(player)
        while len(self._taken) > REMEMBERED:
            self._taken.popitem(last=False)

    async def check(self, player: str | None, name: str | None) -> None:
        """Refuse a guest's ``hello``: its token's ``player`` (None: a new guest) taken over
        by an account, or a ``name`` an account holds (see the module)."""
        if player is not None and player in self._taken:
            raise BadToken(self._taken[player])
        if self.archive is None:
            return
        try:
            if player is not None and await rows.account_by_player(self.archive, player):
                self.taken_over(player)
                raise BadToken(_TAKEN)
            if player is not None and await player_deleted(self.archive, player):
                self.taken_over(player, why=DELETED)
                raise BadToken(DELETED)
            if name is not None and await self.holder(name) is not None:
                raise InvalidMessage("name: belongs to an account: sign in, or pick another")
        except Unavailable as e:
            log.warning("a guest let in unchecked against the accounts: %s", e)

    @property
    def kept(self) -> bool:
        """Whether the server keeps accounts (has a database): only then is a player
        without one a guest on the wire (``guest``)."""
        return self.archive is not None

    async def signed_up(self, players: Collection[str]) -> set[str]:
        """Those of ``players`` that are accounts' now (guests who signed up since, for a
        rematch's new race); empty while the database does not answer (each keeps the
        mark it had)."""
        if self.archive is None or not players:
            return set()
        try:
            return await rows.accounts_of_players(self.archive, list(players))
        except Unavailable as e:
            log.warning("guests' sign-ups not looked up: %s", e)
            return set()

    async def holder(self, name: str) -> rows.AccountRow | None:
        """The account whose name has the key of ``name`` (None: none, or a name that
        cannot be one). Unavailable when the database does not answer."""
        if self.archive is None:
            return None
        try:
            key = check_name(name).key
        except NameRefused:
            return None
        return await rows.account_by_key(self.archive, key)


_TAKEN = "this guest's player is an account's now: sign in to the account"
DELETED = "this guest's player was an account's, deleted since: say hello without a token"
