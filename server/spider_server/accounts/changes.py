"""What an account does to itself: its personal API tokens made, listed and revoked, the
account made a bot account (one way), and the account deleted.

:class:`AccountChanges` holds the node's :class:`~.service.Accounts` (its database,
clock and password checks) and what it needs besides: whether a player has rated races
as a human (``rated_human``, the ratings' records in Redis; the archive is asked too),
and the deletion's work (:class:`~..store.account_erasure.Erasure`). Every refusal is an
:class:`~.service.AccountError` and changes nothing; besides those of :mod:`.service`::

    NoSuchToken                404 no_such_token    no API token of the account by that id
    InRace                     409 in_race          a deletion or bot upgrade while the
                                                    player's races are not archived yet
    RatedHuman                 409 rated_human      a bot upgrade of an account with rated
                                                    races as a human
    TooManyTokens              409 too_many_tokens  the account holds its most API tokens
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Collection

from ..scopes import BOT_PLAY, SCOPES
from ..store import accounts as rows
from ..store import api_tokens
from ..store.account_erasure import Erasure
from ..store.account_links import AccountLinks
from ..store.archive import ArchiveStore
from ..store.endings import EndingStore
from .guests import DELETED
from .service import AccountError, Accounts, Malformed, Signed, Unauthorized

__all__ = [
    "MAX_TOKEN_NAME",
    "AccountChanges",
    "InRace",
    "NoSuchToken",
    "RatedHuman",
    "TooManyTokens",
    "parse_scopes",
    "token_name",
]

MAX_TOKEN_NAME = 40
"""The longest name of an API token."""
_TOKEN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._:-]*$")


class NoSuchToken(AccountError):
    status, code = 404, "no_such_token"


class InRace(AccountError):
    status, code = 409, "in_race"


class RatedHuman(AccountError):
    status, code = 409, "rated_human"


class TooManyTokens(AccountError):
    status, code = 409, "too_many_tokens"


def parse_scopes(text: str | None) -> list[str]:
    """The scopes of a header (separated by spaces or commas), each once, in the order of
    :data:`~..scopes.SCOPES`; :class:`~.service.Malformed` for none or an unknown one."""
    if text is None or not text.strip():
        raise Malformed(f"give the token's scopes as X-Scopes: one or more of {' '.join(SCOPES)}")
    given = [s for s in re.split(r"[\s,]+", text.strip()) if s]
    unknown = [s for s in given if s not in SCOPES]
    if unknown:
        raise Malformed(f"X-Scopes: no scope {unknown[0][:40]!r}; the scopes: {' '.join(SCOPES)}")
    return [s for s in SCOPES if s in given]


def token_name(text: str | None) -> str:
    """A token's name as given (``token`` when none): 1 to :data:`MAX_TOKEN_NAME` ASCII
    letters, digits, spaces and ``. _ : -``, starting with a letter or digit."""
    if text is None:
        return "token"
    name = text.strip()
    if not name or len(name) > MAX_TOKEN_NAME or not _TOKEN_NAME.match(name):
        raise Malformed(
            f"X-Token-Name: 1 to {MAX_TOKEN_NAME} letters, digits, spaces and . _ : -"
            " (ASCII), starting with a letter or digit"
        )
    return name


class AccountChanges:
    """An account's tokens, its kind and its deletion (see the module)."""

    def __init__(
        self,
        accounts: Accounts,
        *,
        rated_human: Callable[[str], Awaitable[bool]] | None = None,
        erasure: Erasure | None = None,
        endings: EndingStore | None = None,
        links: AccountLinks | None = None,
    ) -> None:
        self.accounts = accounts
        self.endings = endings
        """Where a deletion or a revocation is told to every node (their connections of
        it end: :mod:`..runners.endings`)."""
        self.rated_human = rated_human
        """Whether a player has a rated race as a human in the ratings' records."""
        self.erasure = erasure
        """Erases what a deleted account's player left under its name (None: a node
        without a database, where every call is refused before it is needed)."""
        self.links = links
        """The e-mailed links waiting in Redis (a deleted account's are dropped)."""

    def _db(self) -> ArchiveStore:
        """The accounts' database (:class:`~.service.NoAccounts` without one)."""
        return self.accounts.db()

    # -- API tokens ---------------------------------------------------------------------------

    async def create_token(
        self, signed: Signed, *, name: str, scopes: Collection[str]
    ) -> tuple[str, api_tokens.TokenRow]:
        """A new API token of the account (shown once: only its hash is kept) and its
        row. ``bot:play`` only for a bot account; at most
        :data:`~..store.api_tokens.TOKENS_KEPT` tokens."""
        account = signed.account
        if BOT_PLAY in scopes and not account.bot:
            raise Malformed("X-Scopes: bot:play is for bot accounts only (upgrade to a bot first)")
        token = api_tokens.new_api_token()
        now = self.accounts.clock()
        made = await api_tokens.create_token(
            self._db(),
            account.id,
            rows.token_hash(token),
            name=name,
            scopes=list(scopes),
            now=now,
        )
        if made is None:
            raise TooManyTokens(
                f"this account holds {api_tokens.TOKENS_KEPT} API tokens: revoke one first"
            )
        return token, api_tokens.TokenRow(made, name, tuple(scopes), now, None)

    async def tokens(self, signed: Signed) -> list[api_tokens.TokenRow]:
        return await api_tokens.tokens_of(self._db(), signed.account.id)

    async def revoke_token(self, signed: Signed, token: int) -> None:
        """Revoke one of the account's tokens: the connections that said hello with it end,
        on every node, and a new hello with it is ``bad_token``."""
        if not await api_tokens.revoke_token(self._db(), signed.account.id, token):
            raise NoSuchToken(f"this account has no API token {token}")
        if self.endings is not None:
            await self.endings.token_revoked(token)

    # -- a bot account ------------------------------------------------------------------------

    async def upgrade_to_bot(self, signed: Signed) -> rows.AccountRow:
        """Make the account a bot account, for good (again: nothing changes). Refused
        (:class:`~.service.RatedHuman`) when it has a rated race as a human, and
        (:class:`~.service.InRace`) while a race of it is not recorded yet."""
        account = signed.account
        if account.bot:
            return account
        refused = RatedHuman(
            "this account has rated races as a human: only an account with none can be a bot"
        )
        if self.erasure is not None:  # a race it is in would be recorded as a human's
            live, _ = await self.erasure.live_races(account.player)
            if live:
                raise InRace(
                    f"your races {', '.join(live[:5])} are still waiting, running or being"
                    " recorded: finish or leave them, and try again in a minute",
                    retry_after=60,
                )
        if self.rated_human is not None and await self.rated_human(account.player):
            raise refused
        db = self._db()
        if not await rows.make_bot(db, account.id, self.accounts.clock()):
            raise refused  # the archive holds a rated human race of it
        found = await rows.account_by_player(db, account.player)
        assert found is not None
        return found

    # -- deletion -----------------------------------------------------------------------------

    async def delete(self, name: str, password: str, *, address: str) -> rows.AccountRow:
        """Delete the account ``name`` whose password is ``password``: its credentials,
        sessions and tokens at once; its player's results stay, shown as "deleted
        player" (:mod:`..store.account_erasure`). Refused (:class:`~.service.InRace`)
        while a race of the player is not archived yet."""
        account = await self.accounts._check_password(name, password, address=address)
        return await self._erase(account)

    async def delete_signed(self, signed: Signed) -> rows.AccountRow:
        """Delete the account of ``signed`` when it has no password (it was made with a
        passkey: its session is what it signs in with); :class:`~.service.Malformed` when
        it has one (a deletion gives it), else as :meth:`delete`."""
        if signed.account.password is not None:
            raise Malformed(
                "this account has a password: give it (Authorization: Basic) to delete the account"
            )
        return await self._erase(signed.account)

    async def _erase(self, account: rows.AccountRow) -> rows.AccountRow:
        self._db()
        erasure = self.erasure
        assert erasure is not None
        live, kept = await erasure.live_races(account.player)
        if live:
            raise InRace(
                f"your races {', '.join(live[:5])} are still waiting, running or being"
                " recorded: finish or leave them, and try again in a minute",
                retry_after=60,
            )
        now = self.accounts.clock()
        markers = await erasure.erase_archive(account.id, account.player, now)
        if markers is None:
            raise Unauthorized("this account was deleted already")
        await erasure.erase_live(account.player, account.name, kept, markers, now)
        if self.links is not None:  # its links hold its address
            await self.links.forget_account(account.id)
        self.accounts.guests.taken_over(account.player, why=DELETED)
        if self.endings is not None:
            await self.endings.account_deleted(account.player)
        return account
