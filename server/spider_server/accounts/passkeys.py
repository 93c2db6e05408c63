"""Passkeys (WebAuthn, with the ``webauthn`` package): an account made with a passkey
alone, a sign-in with one, passkeys added to an account and removed from it.

The relying party is the page's origin (:func:`page_origin`: the first public origin with
a host name, ``http://localhost:PORT`` on loopback); its id is that origin's host, and an
answer is taken from any public origin of that host or under it. Each ceremony is two
requests: its options, whose challenge is kept in Redis for
``passkey_challenge_lifetime`` seconds (:mod:`..store.account_links`), then the browser's
answer, which takes the challenge it signed once (a second use, or one past its time, is
refused). A registration asks for a discoverable credential, so that a sign-in needs no
name; no attestation is asked for. A credential id is registered once only, and a
sign-in whose signature counter does not grow past the one last seen (when either is not
zero) is refused (WebAuthn §7.2, step 21), as is one whose counter another sign-in moved
meanwhile. An account without a password keeps its last passkey.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import bytes_to_base64url, parse_client_data_json
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.parse_authentication_credential_json import (
    parse_authentication_credential_json,
)
from webauthn.helpers.parse_registration_credential_json import (
    parse_registration_credential_json,
)
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from ..store import passkeys as keys
from ..store.account_links import AccountLinks
from ..tokens import new_player_id
from .service import (
    Accounts,
    BadCredentials,
    LastSignIn,
    Malformed,
    PasskeyRefused,
    PasskeyTaken,
    Signed,
    TooSoon,
)

__all__ = ["RP_NAME", "Passkeys", "page_origin"]

RP_NAME = "Spider Race"
LABEL_KEPT = 60
"""Characters of a passkey's name kept."""
_USED = "this passkey request was answered already or has expired: try again"


def page_origin(origins: tuple[str, ...]) -> str:
    """The origin the page is the relying party of: the first of ``origins`` whose host is
    a name, not an address (WebAuthn takes no address), else ``localhost``'s."""
    for origin in origins:
        host = urlsplit(origin).hostname or ""
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return origin
    port = urlsplit(origins[0]).port if origins else None
    return f"http://localhost{f':{port}' if port else ''}"


def credential_id(text: str) -> bytes:
    """A credential id from its base64url (:class:`Malformed` when it is not)."""
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raw = b""
    if not raw or len(raw) > 1023:
        raise Malformed("X-Passkey: not a passkey's id (base64url)")
    return raw


class Passkeys:
    """The passkeys of a node's ``accounts``; ``origins`` gives the public origins."""

    def __init__(
        self,
        accounts: Accounts,
        links: AccountLinks,
        origins: Callable[[], tuple[str, ...]],
        *,
        lifetime: int,
    ) -> None:
        self.accounts = accounts
        self.links = links
        self.origins = origins
        self.lifetime = lifetime

    @property
    def rp_id(self) -> str:
        return urlsplit(page_origin(self.origins())).hostname or "localhost"

    def expected_origins(self) -> list[str]:
        rp = self.rp_id
        found = [page_origin(self.origins())]
        for origin in self.origins():
            host = urlsplit(origin).hostname or ""
            if host == rp or host.endswith("." + rp):
                found.append(origin)
        return list(dict.fromkeys(found))

    async def _counted(self, address: str) -> None:
        wait = await self.links.challenge_wait(address)
        if wait is not None:
            raise TooSoon(
                f"too many passkey requests from your address: try again in {wait} s",
                retry_after=wait,
            )

    async def _options(self, options: Any, kept: dict[str, Any]) -> dict[str, Any]:
        challenge = bytes_to_base64url(options.challenge)
        await self.links.put_challenge(challenge, kept, self.lifetime)
        answer: dict[str, Any] = json.loads(options_to_json(options))
        return answer

    def _registration(self, player: str, name: str, exclude: list[bytes]) -> Any:
        return generate_registration_options(
            rp_id=self.rp_id,
            rp_name=RP_NAME,
            user_name=name,
            user_id=player.encode(),
            user_display_name=name,
            timeout=self.lifetime * 1000,
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.REQUIRED,
                user_verification=UserVerificationRequirement.PREFERRED,
            ),
            exclude_credentials=[PublicKeyCredentialDescriptor(id=i) for i in exclude],
        )

    async def _challenge(self, client_data: bytes, kind: str) -> tuple[dict[str, Any], bytes]:
        """What the challenge the browser signed was made for, taken once."""
        try:
            challenge = parse_client_data_json(client_data).challenge
        except (WebAuthnException, binascii.Error, ValueError, TypeError) as e:
            raise PasskeyRefused(f"the passkey's answer is garbled: {e}") from None
        found = await self.links.take_challenge(bytes_to_base64url(challenge))
        if found is None or found.get("kind") != kind:
            raise PasskeyRefused(_USED)
        return found, challenge

    def _parse(self, raw: str, parse: Callable[[str], Any]) -> Any:
        try:
            return parse(raw)
        except (WebAuthnException, binascii.Error, ValueError, TypeError, KeyError) as e:
            raise PasskeyRefused(f"the passkey's answer is garbled: {e}") from None

    def _registered(self, credential: Any, challenge: bytes) -> Any:
        try:
            return verify_registration_response(
                credential=credential,
                expected_challenge=challenge,
                expected_rp_id=self.rp_id,
                expected_origin=self.expected_origins(),
            )
        except WebAuthnException as e:
            raise PasskeyRefused(f"the passkey was refused: {e}") from None

    # -- sign-up ----------------------------------------------------------------------------

    async def signup_options(
        self, name: str, *, address: str, guest: str | None = None
    ) -> dict[str, Any]:
        """The options of a new account's passkey, for the name ``name`` (refused as a
        sign-up with a password would be); with ``guest``, the account will take that
        guest over."""
        self.accounts.db()
        taken = None if guest is None else self.accounts.guest_player(guest)
        checked = self.accounts.checked_name(name)
        await self.accounts.check_free(checked, taken, address=address)
        await self._counted(address)
        player = new_player_id() if taken is None else taken
        kept = {"kind": "signup", "name": name, "player": player, "guest": taken is not None}
        return await self._options(self._registration(player, checked.display, []), kept)

    async def sign_up(self, raw: str, *, label: str, address: str, agent: str) -> Signed:
        """The account of a sign-up's options, made with the passkey of the browser's
        answer ``raw`` (JSON), and its first session."""
        credential = self._parse(raw, parse_registration_credential_json)
        found, challenge = await self._challenge(credential.response.client_data_json, "signup")
        checked = self.accounts.checked_name(str(found["name"]))
        taken = str(found["player"]) if found.get("guest") else None
        await self.accounts.check_free(checked, taken, address=address)
        verified = self._registered(credential, challenge)
        made = await keys.create_account_with_passkey(
            self.accounts.db(),
            name=checked.display,
            key=checked.key,
            player=str(found["player"]),
            now=self.accounts.clock(),
            guest=taken is not None,
            credential=verified.credential_id,
            public_key=verified.credential_public_key,
            sign_count=verified.sign_count,
            label=label[:LABEL_KEPT],
        )
        taken_here = PasskeyTaken("this passkey is registered already")
        return await self.accounts.made(
            made, checked, taken, address=address, agent=agent, otherwise=taken_here
        )

    # -- sign-in ----------------------------------------------------------------------------

    async def signin_options(self, *, address: str) -> dict[str, Any]:
        """The options of a sign-in with any of this server's passkeys (a challenge made for
        ``address``: at most :data:`~..store.account_links.CHALLENGES_AN_HOUR` an hour,
        else :class:`TooSoon`)."""
        await self._counted(address)
        options = generate_authentication_options(
            rp_id=self.rp_id,
            timeout=self.lifetime * 1000,
            user_verification=UserVerificationRequirement.PREFERRED,
        )
        return await self._options(options, {"kind": "signin"})

    async def sign_in(self, raw: str, *, address: str, agent: str) -> Signed:
        """A new session of the account whose passkey signed the browser's answer ``raw``
        (JSON). :class:`BadCredentials` for a passkey no account has."""
        credential = self._parse(raw, parse_authentication_credential_json)
        _, challenge = await self._challenge(credential.response.client_data_json, "signin")
        found = await keys.passkey(self.accounts.db(), credential.raw_id)
        if found is None:
            raise BadCredentials("no account of this server has this passkey")
        passkey, account = found
        try:
            verified = verify_authentication_response(
                credential=credential,
                expected_challenge=challenge,
                expected_rp_id=self.rp_id,
                expected_origin=self.expected_origins(),
                credential_public_key=passkey.public_key,
                credential_current_sign_count=passkey.sign_count,
            )
        except WebAuthnException as e:
            raise PasskeyRefused(f"the passkey was refused: {e}") from None
        moved = await keys.passkey_used(
            self.accounts.db(),
            passkey.id,
            seen=passkey.sign_count,
            count=verified.new_sign_count,
            now=self.accounts.clock(),
        )
        if not moved:
            raise PasskeyRefused("this passkey signed in elsewhere at the same moment: try again")
        return await self.accounts.new_session(account, address=address, agent=agent)

    # -- an account's passkeys ----------------------------------------------------------------

    async def add_options(self, signed: Signed, *, address: str) -> dict[str, Any]:
        """The options of one more passkey for the account (those it has are excluded:
        an authenticator that holds one says so)."""
        await self._counted(address)
        account = signed.account
        have = [p.id for p in await keys.passkeys_of(self.accounts.db(), account.id)]
        options = self._registration(account.player, account.name, have)
        return await self._options(options, {"kind": "add", "account": account.id})

    async def add(self, signed: Signed, raw: str, *, label: str) -> keys.PasskeyRow:
        """Keep the passkey of the browser's answer ``raw`` (JSON) as the account's."""
        credential = self._parse(raw, parse_registration_credential_json)
        found, challenge = await self._challenge(credential.response.client_data_json, "add")
        if found.get("account") != signed.account.id:
            raise PasskeyRefused(_USED)
        verified = self._registered(credential, challenge)
        now = self.accounts.clock()
        added = await keys.add_passkey(
            self.accounts.db(),
            signed.account.id,
            credential=verified.credential_id,
            public_key=verified.credential_public_key,
            sign_count=verified.sign_count,
            label=label[:LABEL_KEPT],
            now=now,
        )
        if added == "taken":
            raise PasskeyTaken("this passkey is registered already")
        if added == "full":
            raise PasskeyTaken(f"an account has at most {keys.PASSKEYS_KEPT} passkeys")
        return keys.PasskeyRow(
            verified.credential_id, signed.account.id, b"", verified.sign_count, label, now, None
        )

    async def listed(self, signed: Signed) -> list[keys.PasskeyRow]:
        return await keys.passkeys_of(self.accounts.db(), signed.account.id)

    async def remove(self, signed: Signed, credential: bytes) -> None:
        """Remove a passkey of the account: :class:`Malformed` when it has no such
        passkey, :class:`LastSignIn` when it is the last of an account without a
        password."""
        done = await keys.remove_passkey(self.accounts.db(), signed.account.id, credential)
        if done == "unknown":
            raise Malformed("X-Passkey: the account has no such passkey")
        if done == "last":
            raise LastSignIn(
                "this is the account's last passkey and it has no password: it is kept,"
                " so that you can still sign in"
            )
