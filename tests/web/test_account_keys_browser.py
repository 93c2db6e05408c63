"""The account panel's API tokens, bot upgrade and deletion (docs/web.md, "Accounts"), in
Chromium against a real node with Valkey and PostgreSQL: a token made and shown once, used
by a program, listed with its last use, revoked; the upgrade refused until its warning is
acknowledged, then the account a bot's; the account deleted with its password, the page a
guest's again; an account made with a passkey deleted with no password asked for."""

from __future__ import annotations

from typing import Any

import pytest

from tests.server.account_helpers import ACCOUNT_SETTINGS, basic, call
from tests.server.server_helpers import Client
from tests.web.web_helpers import open_page

from .test_accounts_browser import PASSWORD, _is_guest, _sign, _signed_in_as, _welcomed
from .test_passkeys_browser import authenticator, page_url


@pytest.fixture
async def node(server_node: Any, redis_server: Any, pg_database: Any) -> Any:
    return await server_node(redis_server.url, database_url=pg_database.url, **ACCOUNT_SETTINGS)


async def test_tokens_bot_upgrade_and_delete_from_the_panel(browser, node) -> None:
    made = await call(node, "POST", "/account/signup", basic("Bea", PASSWORD))
    assert made.status == 201, made
    player = await open_page(browser, "bea", "player", node.http_url)
    page = player.page
    await _welcomed(page)
    await _sign(page, "signin", "Bea", PASSWORD)
    await _signed_in_as(page, "Bea")

    await page.click("#account-open")
    await page.wait_for_selector("#token-form")
    await page.wait_for_function(  # the list is read once the panel is drawn
        "() => !document.querySelector('#account-tokens').textContent.includes('Loading')"
    )
    assert "No tokens" in await page.inner_text("#account-tokens")
    assert await page.locator("#token-scopes input[value='bot:play']").count() == 0
    await page.check("#token-scopes input[value='race:play']")
    await page.fill("#token-name", "page bot")
    await page.click("#token-create")
    await page.wait_for_selector("#token-new")
    token = (await page.inner_text("#token-new")).strip()
    assert token.startswith("a1.") and "not shown again" in await page.inner_text("#token-shown")
    line = page.locator("#account-tokens li[data-id]")  # the list read again
    await line.first.wait_for()
    assert "page bot" in await line.first.inner_text()
    assert "race:read race:play" in await line.first.inner_text()
    client = await Client.connect(node.url, name=None, token=token)  # a program uses it
    try:
        assert client.welcome is not None and client.welcome.player == made.body["player"]
    finally:
        await client.close()
    await page.click(".token-revoke")
    await page.wait_for_function(
        "() => document.querySelector('#account-tokens').textContent.includes('No tokens')"
    )

    # the bot upgrade: its warning, refused until acknowledged
    assert "never be a person's account again" in await page.inner_text("#bot-warning")
    await page.click("#bot-upgrade")
    await page.wait_for_function("() => document.querySelector('#keys-error').textContent")
    assert "Tick the box" in await page.inner_text("#keys-error")
    me = await call(node, "GET", "/account/me", {"Authorization": f"Bearer {made.body['token']}"})
    assert me.body["bot"] is False
    await page.check("#bot-sure")
    await page.click("#bot-upgrade")
    await page.wait_for_selector("#bot-account")
    assert await page.locator("#token-scopes input[value='bot:play']").count() == 1
    me = await call(node, "GET", "/account/me", {"Authorization": f"Bearer {made.body['token']}"})
    assert me.body["bot"] is True

    # deleting: the password, and the box ticked
    assert "deleted player" in await page.inner_text("#delete-warning")
    await page.fill("#delete-password", "not the password")
    await page.check("#delete-sure")
    await page.click("#account-delete")
    await page.wait_for_function(
        "() => document.querySelector('#keys-error').textContent.includes('wrong')"
    )
    await page.fill("#delete-password", PASSWORD)
    await page.click("#account-delete")
    await _is_guest(page)
    gone = await call(node, "POST", "/account/signin", basic("Bea", PASSWORD))
    assert gone.status == 401
    assert player.errors == []


async def test_an_account_made_with_a_passkey_is_deleted_without_a_password(browser, node) -> None:
    player = await open_page(browser, "pia", "player", page_url(node))
    page = player.page
    await authenticator(page)
    await _welcomed(page)
    await page.click("#signup")
    await page.wait_for_selector("#passkey-signup")
    await page.fill("#account-name", "Pia")
    await page.click("#passkey-signup")
    await _signed_in_as(page, "Pia")

    # the panel has both: its passkeys and address, and its tokens, bot and deletion
    await page.click("#account-open")
    await page.wait_for_selector("#passkeys li[data-id]")
    await page.wait_for_selector("#token-form")
    assert await page.is_visible("#first-password-form") and await page.is_visible("#bot-form")
    assert await page.locator("#delete-password").count() == 0  # it has none to give
    assert "no password" in await page.inner_text("#delete-no-password")
    await page.click("#account-delete")
    await page.wait_for_function("() => document.querySelector('#keys-error').textContent")
    assert "Tick the box" in await page.inner_text("#keys-error")
    async with node.node.archiver.archive.connection() as conn:
        assert await conn.fetchval("SELECT count(*) FROM accounts WHERE name = 'Pia'") == 1
    await page.check("#delete-sure")
    await page.click("#account-delete")
    await _is_guest(page)
    async with node.node.archiver.archive.connection() as conn:
        assert await conn.fetchval("SELECT count(*) FROM accounts") == 0
        assert await conn.fetchval("SELECT count(*) FROM passkeys") == 0
    assert player.errors == []
