"""E-mail for accounts against a real SMTP server (aiosmtpd on loopback) and a real node,
Valkey and PostgreSQL: an address verified by its link (once; not after its time), a
forgotten password reset by a link that ends every session (once; not after its time),
the answer to a reset the same whether the address is known or not, the mail limits per
address mailed and per address asking, a node without SMTP offering no e-mail, and a
deleted account's addresses and waiting links gone."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .account_helpers import ACCOUNT_SETTINGS, b64, basic, bearer, call, count_rows
from .clocks import TestClock
from .mail_helpers import Inbox, link_token, running_inbox
from .test_account_deletion import personal_in_database, personal_in_redis

PASSWORD = "correct horse battery staple"
NEW_PASSWORD = "a new and longer password"
LIFETIME = 600


@pytest.fixture
def smtp_inbox() -> Iterator[Inbox]:
    with running_inbox() as inbox:
        yield inbox


@pytest.fixture
def clock() -> TestClock:
    return TestClock()


@pytest.fixture
async def node(
    pg_database: Any, server_node: Any, redis_server: Any, smtp_inbox: Inbox, clock: TestClock
) -> Any:
    return await server_node(
        redis_server.url,
        database_url=pg_database.url,
        clock=clock,
        smtp_url=smtp_inbox.url,
        smtp_from="Spider Race <races@spider.example>",
        mail_link_lifetime=LIFETIME,
        email_mails=2,
        address_mails=3,
        **ACCOUNT_SETTINGS,
    )


async def _me(node: Any, token: str) -> dict[str, Any]:
    me = await call(node, "GET", "/account/me", bearer(token))
    assert me.status == 200, me
    return dict(me.body)


async def test_the_page_is_told_that_mail_is_offered(node: Any) -> None:
    config = await call(node, "GET", "/account/config")
    assert config.status == 200
    assert config.body == {"email": True, "passkeys": True, "rp_id": "localhost"}


async def test_an_address_is_verified_by_its_link_once_and_not_after_its_time(
    node: Any, smtp_inbox: Inbox, clock: TestClock
) -> None:
    made = await call(
        node, "POST", "/account/signup", {**basic("Ada", PASSWORD), "X-Email": "Ada@Example.org"}
    )
    assert made.status == 201, made
    assert made.body["email"] == "Ada@Example.org"
    token = made.body["token"]
    assert (await _me(node, token))["email"] is None  # not until the link is opened

    to, mail = await smtp_inbox.mail(1)
    assert to == ["Ada@Example.org"]
    assert mail["From"] == "Spider Race <races@spider.example>"
    assert "account Ada" in str(mail.get_body(preferencelist=("plain",)).get_content())
    link = link_token(mail, "verify")

    opened = await call(node, "POST", "/account/email/verify", {"X-Mail-Token": link})
    assert opened.status == 200, opened
    assert opened.body == {"email": "Ada@Example.org"}
    me = await _me(node, token)
    assert me["email"] == "Ada@Example.org" and me["password"] is True

    again = await call(node, "POST", "/account/email/verify", {"X-Mail-Token": link})
    assert again.status == 400 and again.error == "bad_link", again

    # another address, asked for from the account; its link opened too late
    asked = await call(
        node, "POST", "/account/email", {**bearer(token), "X-Email": "ada@elsewhere.example"}
    )
    assert asked.status == 202 and asked.body == {"sent": True, "email": "ada@elsewhere.example"}
    _, second = await smtp_inbox.mail(2)
    late = link_token(second, "verify")
    clock.move(LIFETIME + 1)
    expired = await call(node, "POST", "/account/email/verify", {"X-Mail-Token": late})
    assert expired.status == 400 and expired.error == "bad_link", expired
    assert (await _me(node, token))["email"] == "Ada@Example.org"  # unchanged

    made_up = await call(node, "POST", "/account/email/verify", {"X-Mail-Token": "x" * 43})
    assert made_up.status == 400 and made_up.error == "bad_link"


async def _verified(node: Any, inbox: Inbox, name: str, email: str, n: int) -> str:
    """A new account ``name`` with ``email`` verified (the ``n``-th mail); its token."""
    made = await call(node, "POST", "/account/signup", {**basic(name, PASSWORD), "X-Email": email})
    assert made.status == 201, made
    _, mail = await inbox.mail(n)
    opened = await call(
        node, "POST", "/account/email/verify", {"X-Mail-Token": link_token(mail, "verify")}
    )
    assert opened.status == 200, opened
    return str(made.body["token"])


async def test_a_forgotten_password_is_reset_once_and_every_session_ends(
    node: Any, smtp_inbox: Inbox, clock: TestClock
) -> None:
    first = await _verified(node, smtp_inbox, "Grace", "grace@example.org", 1)
    other = await call(node, "POST", "/account/signin", basic("Grace", PASSWORD))
    assert other.status == 200

    unknown = await call(
        node, "POST", "/account/password/forgot", {"X-Email": "nobody@example.org"},
        address="203.0.113.5",
    )  # fmt: skip
    known = await call(
        node, "POST", "/account/password/forgot", {"X-Email": "GRACE@example.org"},
        address="203.0.113.6",
    )  # fmt: skip
    assert unknown.status == known.status == 202
    assert unknown.body == known.body == {"sent": True}  # the answer says nothing
    to, mail = await smtp_inbox.mail(2)
    assert to == ["grace@example.org"]  # the verified address, as kept
    link = link_token(mail, "reset")

    weak = await call(
        node, "POST", "/account/password/reset",
        {"X-Mail-Token": link, "X-New-Password": b64("short")},
    )  # fmt: skip
    assert weak.status == 400 and weak.error == "weak_password"  # the link still works

    reset = await call(
        node, "POST", "/account/password/reset",
        {"X-Mail-Token": link, "X-New-Password": b64(NEW_PASSWORD)},
    )  # fmt: skip
    assert reset.status == 200, reset
    assert reset.body["name"] == "Grace"
    assert reset.headers["Set-Cookie"].startswith(f"spider_session={reset.body['token']};")
    for ended in (first, other.body["token"]):
        gone = await call(node, "GET", "/account/me", bearer(ended))
        assert gone.status == 401
    assert (await _me(node, reset.body["token"]))["name"] == "Grace"
    old = await call(node, "POST", "/account/signin", basic("Grace", PASSWORD))
    assert old.status == 401
    new = await call(node, "POST", "/account/signin", basic("Grace", NEW_PASSWORD))
    assert new.status == 200

    used = await call(
        node, "POST", "/account/password/reset",
        {"X-Mail-Token": link, "X-New-Password": b64("yet another password")},
    )  # fmt: skip
    assert used.status == 400 and used.error == "bad_link"

    # a second link, opened after its time (asked for the next hour: two mails an hour)
    clock.move(3600)
    asked = await call(node, "POST", "/account/password/forgot", {"X-Email": "grace@example.org"})
    assert asked.status == 202, asked
    _, late_mail = await smtp_inbox.mail(3)
    clock.move(LIFETIME + 1)
    late = await call(
        node, "POST", "/account/password/reset",
        {"X-Mail-Token": link_token(late_mail, "reset"), "X-New-Password": b64(PASSWORD + "!")},
    )  # fmt: skip
    assert late.status == 400 and late.error == "bad_link"
    still = await call(node, "POST", "/account/signin", basic("Grace", NEW_PASSWORD))
    assert still.status == 200
    assert len(smtp_inbox.mails) == 3  # none to the unknown address


async def test_mails_are_limited_per_address_mailed_and_per_address_asking(
    node: Any, smtp_inbox: Inbox, clock: TestClock
) -> None:
    async def forgot(email: str, address: str) -> Any:
        return await call(
            node, "POST", "/account/password/forgot", {"X-Email": email}, address=address
        )

    # two mails an hour to one address, whoever asks, known or not
    assert (await forgot("target@example.org", "198.51.100.1")).status == 202
    assert (await forgot("TARGET@example.org", "198.51.100.2")).status == 202
    third = await forgot("target@example.org", "198.51.100.3")
    assert third.status == 429 and third.error == "rate_limited"
    assert 1 <= int(third.headers["Retry-After"]) <= 3600

    # three an hour asked for from one address (here an IPv6 /64), whatever the target
    for n in range(3):
        assert (await forgot(f"p{n}@example.org", f"2001:db8::{n + 1}")).status == 202
    fourth = await forgot("p9@example.org", "2001:db8::99")
    assert fourth.status == 429 and fourth.error == "rate_limited"
    assert (await forgot("p9@example.org", "2001:db8:1::1")).status == 202  # another /64

    clock.move(3600)  # the next hour
    assert (await forgot("target@example.org", "198.51.100.1")).status == 202
    assert (await forgot("p8@example.org", "2001:db8::7")).status == 202


async def test_bad_addresses_change_nothing(node: Any) -> None:
    for bad in ("no-at-sign", "two@@example.org", "a b@example.org", "x@" + "y" * 260 + ".org"):
        refused = await call(
            node, "POST", "/account/signup", {**basic("Hopper", PASSWORD), "X-Email": bad}
        )
        assert refused.status == 400 and refused.error == "bad_request", (bad, refused)
    assert await count_rows(node) == (0, 0)
    forgot = await call(node, "POST", "/account/password/forgot")
    assert forgot.status == 400 and "X-Email" in forgot.body["message"]


async def test_a_node_without_smtp_offers_no_email(
    pg_database: Any, server_node: Any, redis_server: Any
) -> None:
    node = await server_node(redis_server.url, database_url=pg_database.url, **ACCOUNT_SETTINGS)
    config = await call(node, "GET", "/account/config")
    assert config.status == 200 and config.body["email"] is False
    refused = await call(
        node, "POST", "/account/signup", {**basic("Lin", PASSWORD), "X-Email": "lin@example.org"}
    )
    assert refused.status == 404 and refused.error == "no_email"
    assert await count_rows(node) == (0, 0)
    made = await call(node, "POST", "/account/signup", basic("Lin", PASSWORD))
    token = made.body["token"]
    for path, headers in (
        ("/account/email", {**bearer(token), "X-Email": "lin@example.org"}),
        ("/account/password/forgot", {"X-Email": "lin@example.org"}),
        ("/account/email/verify", {"X-Mail-Token": "x" * 43}),
    ):
        answer = await call(node, "POST", path, headers)
        assert answer.status == 404 and answer.error == "no_email", (path, answer)


async def test_a_deleted_account_leaves_no_address_nor_waiting_link(
    node: Any, smtp_inbox: Inbox
) -> None:
    token = await _verified(node, smtp_inbox, "Ada", "Ada@Example.org", 1)
    asked = await call(
        node, "POST", "/account/email", {**bearer(token), "X-Email": "ada@elsewhere.example"}
    )
    assert asked.status == 202, asked
    _, second = await smtp_inbox.mail(2)
    waiting = link_token(second, "verify")
    needles = [b"ada@example.org", b"ada@elsewhere.example"]
    redis = node.node.store.redis
    assert await personal_in_database(node, needles[:1]) == ["accounts.email", "accounts.email_key"]
    assert await personal_in_redis(redis, needles[1:])  # the waiting link holds it

    gone = await call(node, "POST", "/account/delete", basic("Ada", PASSWORD))
    assert gone.status == 200, gone
    assert await personal_in_database(node, needles) == []
    assert await personal_in_redis(redis, needles) == []
    late = await call(node, "POST", "/account/email/verify", {"X-Mail-Token": waiting})
    assert late.status == 400 and late.error == "bad_link", late
