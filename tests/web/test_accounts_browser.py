"""Accounts on the page (docs/web.md, "Accounts"), in Chromium against a real node with
Valkey and PostgreSQL: sign up from a guest's banner, the account's name in the lobby and
the room, still signed in after a reload (the HttpOnly cookie, never in the page's
storage), the account's panel with its session, sign out back to the guest; the refusals
said in plain words; sign out everywhere from one browser signs another out."""

from __future__ import annotations

from typing import Any

import pytest

from tests.server.account_helpers import ACCOUNT_SETTINGS, basic, call
from tests.web.layout import SIZES, check_screen
from tests.web.web_helpers import assert_no_leaks, blank_page, open_page

PASSWORD = "correct horse battery staple"


@pytest.fixture
async def node(server_node: Any, redis_server: Any, pg_database: Any) -> Any:
    return await server_node(redis_server.url, database_url=pg_database.url, **ACCOUNT_SETTINGS)


async def _welcomed(page: Any) -> None:
    await page.wait_for_function("() => window.spiderRace.session.welcomed")
    await page.wait_for_selector("#account-bar p")


async def _sign(page: Any, mode: str, name: str, password: str) -> None:
    """Open the sign-up or sign-in form from the lobby and send it."""
    await page.click(f"#{mode}")
    await page.wait_for_selector("#account-form")
    await page.fill("#account-name", name)
    await page.fill("#account-password", password)
    await page.click("#account-submit")


async def _signed_in_as(page: Any, name: str) -> None:
    await page.wait_for_selector("#signed-in-name")
    assert (await page.inner_text("#signed-in-name")).strip() == name
    assert await page.evaluate("() => window.spiderRace.session.account") == name
    assert not await page.is_visible("#guest-banner")
    assert not await page.is_visible("#name")  # an account plays under its own name


async def _is_guest(page: Any) -> None:
    await page.wait_for_selector("#guest-banner")
    assert "(guest)" in await page.inner_text("#guest-banner")
    assert await page.evaluate("() => window.spiderRace.session.account") is None


async def _error(page: Any) -> str:
    await page.wait_for_function(
        "() => document.querySelector('#account-error')?.textContent.trim()"
    )
    return str(await page.inner_text("#account-error")).strip()


async def _no_session_token_kept(page: Any) -> None:
    kept = await page.evaluate("() => JSON.stringify(Object.entries(localStorage))")
    assert "s1." not in kept, kept
    assert "spider_session" not in await page.evaluate("() => document.cookie")  # HttpOnly


async def test_sign_up_play_reload_the_account_panel_and_sign_out(browser, node) -> None:
    player = await open_page(browser, "ada", "player", node.http_url)
    page = player.page
    await _welcomed(page)
    await page.fill("#name", "alice")
    await page.click("#create")  # a guest's race: the guest is "alice"
    await page.wait_for_selector("#ready")
    guest = await page.evaluate("() => window.spiderRace.session.player")
    await page.goto(node.http_url)
    await _is_guest(page)
    assert "alice (guest)" in await page.inner_text("#guest-banner")
    assert "nobody else can take" in await page.inner_text("#guest-banner")
    await check_screen(player, "guest-lobby")

    await page.click("#signup")
    await page.wait_for_selector("#account-form")
    assert "At least 8 characters" in await page.inner_text("#password-rules")
    assert await page.get_attribute("#account-password", "type") == "password"
    await page.check("#account-password-show")  # the password shown as typed
    assert await page.get_attribute("#account-password", "type") == "text"
    await page.fill("#account-name", "Ada")
    await page.fill("#account-password", PASSWORD)
    await page.keyboard.press("Enter")
    await _signed_in_as(page, "Ada")
    account_player = await page.evaluate("() => window.spiderRace.session.player")
    assert account_player == guest  # the account took the guest over (X-Guest-Token)
    await _no_session_token_kept(page)

    await page.reload()  # the cookie signs the new connection in
    await _welcomed(page)
    await _signed_in_as(page, "Ada")
    assert await page.evaluate("() => window.spiderRace.session.player") == account_player

    # the account plays: its name in the room, without "(guest)"; no card leaks
    await page.select_option("#variant", "spider1")
    await page.click("details.more summary")
    await page.fill("#countdown", "0")
    await page.click("#create")
    await page.wait_for_selector("#ready")
    mine = page.locator("#room-players li", has_text="Ada")
    assert "(guest)" not in await mine.inner_text()
    await page.click("#ready")
    await page.wait_for_selector("#board .card.up", timeout=30_000)
    assert_no_leaks("spider1", [player])

    await page.goto(node.http_url)
    await _welcomed(page)
    await page.click("#account-open")
    await page.wait_for_selector("#account-sessions li[data-current='1']")
    sessions = page.locator("#account-sessions li")
    assert await sessions.count() == 1
    text = await sessions.first.inner_text()
    assert "Chrome on Linux" in text and "this one" in text and "127.0.0.1" in text
    for width, height in SIZES:
        await page.set_viewport_size({"width": width, "height": height})
        await check_screen(player, "account-panel")
    await page.set_viewport_size({"width": 1280, "height": 800})

    await page.click("#account-signout")
    await _is_guest(page)  # a new guest: the old one is the account's
    assert await page.evaluate("() => window.spiderRace.session.player") != guest
    assert "alice (guest)" in await page.inner_text("#guest-banner")
    await page.reload()
    await _welcomed(page)
    await _is_guest(page)
    assert player.errors == []


async def test_refusals_are_said_in_plain_words(browser, node) -> None:
    made = await call(node, "POST", "/account/signup", basic("Grace", PASSWORD))
    assert made.status == 201, made
    player = await open_page(browser, "bo", "player", node.http_url)
    page = player.page
    await _welcomed(page)

    await _sign(page, "signup", "Bo", "abc")
    assert await _error(page) == "A password needs at least 8 characters."
    assert await page.evaluate("document.activeElement.id") == "account-password"
    await page.fill("#account-password", "password")
    await page.click("#account-submit")
    await page.wait_for_function(
        "() => document.querySelector('#account-error').textContent.includes('common')"
    )
    assert await _error(page) == "This password is one of the most common ones: choose another."
    await page.fill("#account-name", "Bo!")
    await page.fill("#account-password", PASSWORD)
    await page.click("#account-submit")
    await page.wait_for_function(
        "() => document.querySelector('#account-error').textContent.includes('U+0021')"
    )
    assert (await _error(page)).startswith("The name contains U+0021 EXCLAMATION MARK")
    await page.fill("#account-name", "GRACE")
    await page.click("#account-submit")
    await page.wait_for_function(
        "() => document.querySelector('#account-error').textContent.includes('taken')"
    )
    assert await _error(page) == "That name is taken (or one that looks like it): choose another."
    await page.keyboard.press("Escape")
    await _is_guest(page)

    await _sign(page, "signin", "Grace", "not the password")
    assert await _error(page) == "The name or the password is wrong."
    await page.keyboard.press("Escape")
    await _is_guest(page)  # nothing changed
    await _no_session_token_kept(page)
    assert player.errors == []


async def test_sign_out_everywhere_signs_another_browser_out(browser, node) -> None:
    first = await open_page(browser, "cy-1", "player", node.http_url)
    second = await open_page(browser, "cy-2", "player", node.http_url, width=375, height=667)
    a, b = first.page, second.page
    await _welcomed(a)
    await _sign(a, "signup", "Cy", PASSWORD)
    await _signed_in_as(a, "Cy")
    await _welcomed(b)
    await _sign(b, "signin", "cy", PASSWORD)  # the name in any case
    await _signed_in_as(b, "Cy")
    await check_screen(second, "account-lobby")

    await a.click("#account-open")
    await a.wait_for_function(
        "() => document.querySelectorAll('#account-sessions li[data-id]').length === 2"
    )
    assert await a.locator("#account-sessions li[data-current='1']").count() == 1
    await a.click("#account-signout-all")
    await _is_guest(a)
    await b.reload()
    await _welcomed(b)
    await _is_guest(b)
    assert first.errors == [] and second.errors == []


async def test_a_password_changed_from_the_account_panel(browser, node) -> None:
    other = await call(node, "POST", "/account/signup", basic("Dee", PASSWORD), address="127.0.0.1")
    assert other.status == 201, other
    player = await open_page(browser, "dee", "player", node.http_url)
    page = player.page
    await _welcomed(page)
    await _sign(page, "signin", "Dee", PASSWORD)
    await _signed_in_as(page, "Dee")
    await page.click("#account-open")
    await page.wait_for_selector("#account-sessions li[data-current='1']")
    await page.fill("#old-password", PASSWORD)
    await page.fill("#new-password", "short")
    await page.click("#password-submit")
    await page.wait_for_function(
        "() => document.querySelector('#account-panel-error').textContent.trim()"
    )
    assert (
        await page.inner_text("#account-panel-error") == "A password needs at least 8 characters."
    )
    await page.fill("#old-password", PASSWORD)
    await page.fill("#new-password", "a new and longer one")
    await page.click("#password-submit")
    await page.wait_for_function(
        "() => document.querySelector('#password-done').textContent.trim()"
    )
    assert (
        await page.inner_text("#password-done") == "Password changed; 1 other session signed out."
    )
    await page.wait_for_function(
        "() => document.querySelectorAll('#account-sessions li[data-id]').length === 1"
    )
    stale = await call(
        node, "GET", "/account/me", {"Authorization": f"Bearer {other.body['token']}"}
    )
    assert stale.status == 401
    fresh = await call(node, "POST", "/account/signin", basic("Dee", "a new and longer one"))
    assert fresh.status == 200, fresh
    assert fresh.body["name"] == "Dee"
    assert player.errors == []


async def test_the_words_of_refusals_and_the_guest_mark(browser, static_url) -> None:
    page = await blank_page(browser, static_url)
    said = await page.evaluate(
        """async () => {
          const { accountWords, agentWords } = await import('/account.js');
          const { guestMark, h } = await import('/dom.js');
          const li = h('li', {}, 'alice', guestMark({ guest: true }));
          const acct = h('li', {}, 'Ada', guestMark({ guest: false }), guestMark({}));
          return [
            accountWords({ error: 'rate_limited', message: 'too many accounts made from your address: try again in 60 s' }, 429, '60'),
            accountWords({ error: 'rate_limited', message: 'too many tries' }, 429, '30'),
            accountWords({ error: 'name_refused', message: 'this name is refused: mixes Cyrillic and Latin letters' }, 400),
            accountWords(null, 502),
            li.textContent, acct.textContent,
            agentWords('Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:120.0) Gecko/20100101 Firefox/120.0'),
            agentWords('Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Mobile/15E148 Safari/604.1'),
            agentWords('spider-race/0.9 (terminal)'), agentWords(''),
          ];
        }"""
    )
    assert said == [
        "Too many accounts made from your address: try again in 60 s.",
        "Too many tries: try again in 30 s.",
        "The name mixes Cyrillic and Latin letters.",
        "The server answered 502.",
        "alice (guest)",
        "Ada",
        "Firefox on Windows",
        "Safari on iOS",
        "spider-race/0.9 (terminal)",
        "an unknown browser or program",
    ]
    await page.close()
