"""E-mail on the page (docs/web.md, "E-mail"), in Chromium against a real node on
``localhost`` that mails through a real SMTP server (aiosmtpd on loopback): an address
given at sign-up and confirmed by opening its link, the link refused when opened again,
a forgotten password reset from the sign-in form by its link (signed in, every other
session ended); a node without SMTP offers no e-mail at all."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.server.account_helpers import ACCOUNT_SETTINGS, basic, bearer, call
from tests.server.mail_helpers import Inbox, running_inbox
from tests.web.web_helpers import open_page

PASSWORD = "correct horse battery staple"


@pytest.fixture
def smtp_inbox() -> Iterator[Inbox]:
    with running_inbox() as inbox:
        yield inbox


@pytest.fixture
async def node(server_node: Any, redis_server: Any, pg_database: Any, smtp_inbox: Inbox) -> Any:
    return await server_node(
        redis_server.url, database_url=pg_database.url, smtp_url=smtp_inbox.url, **ACCOUNT_SETTINGS
    )


def page_url(node: Any) -> str:
    return f"http://localhost:{node.node.port}"


def link(mail: Any, kind: str) -> str:
    """The link of a mail's text, as its owner would open it."""
    text = str(mail.get_body(preferencelist=("plain",)).get_content())
    found = next(line for line in text.splitlines() if f"/#{kind}=" in line)
    return found.strip()


async def _welcomed(page: Any) -> None:
    await page.wait_for_function("() => window.spiderRace.session.welcomed")
    await page.wait_for_selector("#account-bar p")


async def _signed_in_as(page: Any, name: str) -> None:
    await page.wait_for_selector("#signed-in-name")
    assert (await page.inner_text("#signed-in-name")).strip() == name


async def test_an_address_confirmed_and_a_password_reset(
    browser: Any, node: Any, smtp_inbox: Inbox
) -> None:
    player = await open_page(browser, "ada", "player", page_url(node))
    page = player.page
    await _welcomed(page)
    await page.click("#signup")
    await page.wait_for_selector("#account-email-row")
    await page.fill("#account-name", "Ada")
    await page.fill("#account-password", PASSWORD)
    await page.fill("#account-email", "ada@example.org")
    await page.click("#account-submit")
    await _signed_in_as(page, "Ada")

    _, mail = await smtp_inbox.mail(1)
    verify = link(mail, "verify")
    assert verify.startswith(page_url(node) + "/#verify=")
    await page.goto(verify)
    await page.wait_for_function(
        "() => document.querySelector('#verify-said')?.textContent.includes('confirmed')"
    )
    assert await page.inner_text("#verify-said") == "Your address ada@example.org is confirmed."
    assert "#verify" not in page.url  # the token leaves the address bar
    await page.keyboard.press("Escape")
    await page.click("#account-open")
    await page.wait_for_selector("#email-current strong")
    assert await page.inner_text("#email-current strong") == "ada@example.org"
    await page.keyboard.press("Escape")

    await page.goto(verify)  # once only
    await page.wait_for_function(
        "() => document.querySelector('#verify-said')?.textContent.includes('link')"
    )
    assert await page.inner_text("#verify-said") == (
        "This link was used already or has expired: ask for a new one."
    )

    # another browser signed in; this one signs out and forgets the password
    other = await call(node, "POST", "/account/signin", basic("Ada", PASSWORD))
    assert other.status == 200
    await page.keyboard.press("Escape")
    await page.click("#signout")
    await page.wait_for_selector("#guest-banner")
    await page.click("#signin")
    await page.click("#account-forgot")
    await page.fill("#forgot-email", "ADA@example.org")
    await page.click("#forgot-submit")
    await page.wait_for_function("() => document.querySelector('#forgot-done')?.textContent.trim()")
    assert "is on its way" in await page.inner_text("#forgot-done")
    _, reset_mail = await smtp_inbox.mail(2)
    await page.goto(link(reset_mail, "reset"))
    await page.wait_for_selector("#reset-form")
    await page.fill("#reset-password", "a new and longer password")
    await page.click("#reset-submit")
    await _signed_in_as(page, "Ada")
    gone = await call(node, "GET", "/account/me", bearer(other.body["token"]))
    assert gone.status == 401  # every other session ended
    new = await call(node, "POST", "/account/signin", basic("Ada", "a new and longer password"))
    assert new.status == 200
    assert player.errors == []


async def test_without_smtp_the_page_offers_no_email(
    browser: Any, server_node: Any, redis_server: Any, pg_database: Any
) -> None:
    plain = await server_node(redis_server.url, database_url=pg_database.url, **ACCOUNT_SETTINGS)
    player = await open_page(browser, "bo", "player", page_url(plain))
    page = player.page
    await _welcomed(page)
    await page.click("#signup")
    await page.wait_for_selector("#account-form")
    assert await page.locator("#account-email-row").count() == 0
    await page.fill("#account-name", "Bo")
    await page.fill("#account-password", PASSWORD)
    await page.click("#account-submit")
    await _signed_in_as(page, "Bo")
    await page.click("#account-open")
    await page.wait_for_selector("#passkeys-section")
    assert await page.locator("#email-section *").count() == 0
    await page.keyboard.press("Escape")
    await page.click("#signout")
    await page.wait_for_selector("#guest-banner")
    await page.click("#signin")
    await page.wait_for_selector("#account-form")
    assert await page.locator("#account-forgot").count() == 0
    assert player.errors == []
