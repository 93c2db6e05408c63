"""Passkeys on the page (docs/web.md, "Passkeys"), in Chromium with a virtual authenticator
(the DevTools protocol's WebAuthn domain) against a real node on ``localhost`` (WebAuthn
takes a host name, never an address) with Valkey and PostgreSQL: sign up with a passkey
alone, sign out, sign in with it; a second passkey added from the account panel on another
authenticator, the first removed, the last kept (the account has no password); a challenge
answered twice, or after its time, refused in plain words."""

from __future__ import annotations

from typing import Any

import pytest

from tests.server.account_helpers import ACCOUNT_SETTINGS, basic, call
from tests.server.clocks import TestClock
from tests.web.web_helpers import open_page

LIFETIME = 120
PASSWORD = "correct horse battery staple"


@pytest.fixture
def clock() -> TestClock:
    return TestClock()


@pytest.fixture
async def node(server_node: Any, redis_server: Any, pg_database: Any, clock: TestClock) -> Any:
    return await server_node(
        redis_server.url,
        database_url=pg_database.url,
        clock=clock,
        passkey_challenge_lifetime=LIFETIME,
        **ACCOUNT_SETTINGS,
    )


def page_url(node: Any) -> str:
    return f"http://localhost:{node.node.port}"


async def authenticator(page: Any) -> tuple[Any, str]:
    """A virtual platform authenticator on ``page`` (resident keys, user verification that
    passes, presence given at once); the DevTools session and its id."""
    cdp = await page.context.new_cdp_session(page)
    await cdp.send("WebAuthn.enable")
    added = await cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )
    return cdp, added["authenticatorId"]


async def _welcomed(page: Any) -> None:
    await page.wait_for_function("() => window.spiderRace.session.welcomed")
    await page.wait_for_selector("#account-bar p")


async def _signed_in_as(page: Any, name: str) -> None:
    await page.wait_for_selector("#signed-in-name")
    assert (await page.inner_text("#signed-in-name")).strip() == name
    assert await page.evaluate("() => window.spiderRace.session.account") == name


async def _error(page: Any) -> str:
    await page.wait_for_function(
        "() => document.querySelector('#account-error')?.textContent.trim()"
    )
    text = str(await page.inner_text("#account-error")).strip()
    await page.evaluate("() => (document.querySelector('#account-error').textContent = '')")
    return text


async def _passkeys(page: Any, n: int) -> list[str]:
    await page.wait_for_function(
        f"() => document.querySelectorAll('#passkeys li[data-id]').length === {n}"
    )
    return [str(x) for x in await page.locator("#passkeys li[data-id]").all_inner_texts()]


async def test_sign_up_sign_in_add_remove_and_refusals(
    browser: Any, node: Any, clock: TestClock
) -> None:
    player = await open_page(browser, "ada", "player", page_url(node))
    page = player.page
    cdp, first = await authenticator(page)
    await _welcomed(page)

    # sign up with a passkey alone: a name, no password
    await page.click("#signup")
    await page.wait_for_selector("#passkey-signup")
    assert not await page.is_visible("#account-email-row")  # this node sends no mail
    await page.fill("#account-name", "Ada")
    await page.click("#passkey-signup")
    await _signed_in_as(page, "Ada")
    held = await cdp.send("WebAuthn.getCredentials", {"authenticatorId": first})
    assert len(held["credentials"]) == 1 and held["credentials"][0]["isResidentCredential"]
    assert held["credentials"][0]["rpId"] == "localhost"

    await page.click("#signout")
    await page.wait_for_selector("#guest-banner")

    # sign in with it: no name typed (a discoverable passkey); its answer kept to replay
    answers: list[str] = []
    page.on(
        "request",
        lambda r: (
            answers.append(r.headers["x-webauthn"])
            if r.url.endswith("/account/passkey/signin")
            else None
        ),
    )
    await page.click("#signin")
    await page.wait_for_selector("#passkey-signin")
    await page.click("#passkey-signin")
    await _signed_in_as(page, "Ada")
    assert len(answers) == 1

    # the same answer sent again: its challenge was used
    replayed = await page.evaluate(
        """async (answer) => {
          const r = await fetch('/account/passkey/signin', { method: 'POST', headers: { 'X-WebAuthn': answer } });
          return [r.status, await r.json()];
        }""",
        answers[0],
    )
    assert replayed[0] == 400 and replayed[1]["error"] == "passkey_refused", replayed
    assert "answered already or has expired" in replayed[1]["message"]

    # a second passkey, from another authenticator, added in the account panel
    await page.click("#account-open")
    assert (await _passkeys(page, 1))[0].startswith("Chrome on Linux")
    assert await page.is_visible("#no-password")  # no password form: it has none
    assert await page.locator(".passkey-remove").first.is_disabled()  # the only one
    await cdp.send("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": first})
    _, second = await authenticator(page)
    await page.click("#passkey-add")
    await _passkeys(page, 2)
    assert not await page.locator(".passkey-remove").first.is_disabled()

    # the first removed: the second is the last, and kept
    await page.locator("#passkeys li[data-id]").first.locator(".passkey-remove").click()
    await _passkeys(page, 1)
    assert await page.locator(".passkey-remove").first.is_disabled()
    await page.keyboard.press("Escape")

    # sign in with the second, once its challenge has ended (refused), then in time
    await page.click("#signout")
    await page.wait_for_selector("#guest-banner")

    async def late(route: Any) -> None:
        clock.move(LIFETIME + 1)  # the challenge ended while the browser asked
        await route.continue_()

    await page.route("**/account/passkey/signin", late)
    await page.click("#signin")
    await page.wait_for_selector("#passkey-signin")
    await page.click("#passkey-signin")
    assert await _error(page) == (
        "This passkey request was answered already or has expired: try again."
    )
    await page.unroute("**/account/passkey/signin", late)
    await page.click("#passkey-signin")
    await _signed_in_as(page, "Ada")

    # a password set from the panel: the terminal and bots may sign in with it
    await page.click("#account-open")
    await page.wait_for_selector("#first-password-form")
    await page.fill("#new-password", PASSWORD)
    await page.click("#password-submit")
    await page.wait_for_selector("#password-done")
    assert "Password set" in await page.inner_text("#password-done")
    signed = await call(node, "POST", "/account/signin", basic("Ada", PASSWORD))
    assert signed.status == 200, signed
    assert player.errors == []


async def test_a_passkey_no_account_has_is_refused(browser: Any, node: Any) -> None:
    player = await open_page(browser, "bo", "player", page_url(node))
    page = player.page
    cdp, held = await authenticator(page)
    await _welcomed(page)
    await page.click("#signup")
    await page.wait_for_selector("#passkey-signup")
    await page.fill("#account-name", "Bo")
    await page.click("#passkey-signup")
    await _signed_in_as(page, "Bo")
    account = await page.evaluate(
        "async () => (await (await fetch('/account/me')).json()).password"
    )
    assert account is False

    # the account goes (its row deleted, passkeys with it); the authenticator still holds one
    archive = node.node.archiver.archive
    async with archive.connection() as conn:
        await conn.execute("DELETE FROM accounts WHERE name = 'Bo'")
    await page.reload()
    await _welcomed(page)
    await page.click("#signin")
    await page.wait_for_selector("#passkey-signin")
    await page.click("#passkey-signin")
    assert await _error(page) == "No account of this server has this passkey."
    assert (
        len((await cdp.send("WebAuthn.getCredentials", {"authenticatorId": held}))["credentials"])
        == 1
    )
    assert player.errors == []
