"""Every query of the archive uses an index: each query of every module of the store that
keeps its queries in a ``QUERIES`` table is run under ``EXPLAIN`` (with the parameters of
the module's ``EXAMPLES``) on a database filled with a few thousand rows and analyzed, and
no plan may read a table of the archive whole (a ``Seq Scan``). The planner chooses freely:
nothing is switched off. Both the plan for the example's values and the generic plan a
prepared statement falls back to are checked. INSERT statements are only EXPLAINed (they
must parse)."""

from __future__ import annotations

import importlib
import json
import pkgutil
from types import ModuleType
from typing import Any

PLAYERS = 5000
RACES = 8000

FILL = [
    # races: three variants; one in ten a daily race (some 30 days); half of them rated
    f"""INSERT INTO races (code, created_at, finished_at, variant, rated, daily, players,
        actions, meta, entries)
        SELECT 'C' || i, 1.7e9 + i * 60, 1.7e9 + i * 60 + 300,
               (ARRAY['spider1', 'spider2', 'spider4'])[i % 3 + 1], i % 2 = 0,
               CASE WHEN i % 10 = 0 THEN '2026-11-' || lpad((i / 10 % 30 + 1)::text, 2, '0')
                    ELSE '' END,
               2, 400, '\\x80'::bytea, '\\x80'::bytea
        FROM generate_series(1, {RACES}) AS i""",
    # two players a race, the first one won
    f"""INSERT INTO race_players (player, race_id, name, rank, status, time, moves, score, bot)
        SELECT 'p' || ((r.id * k * 7919) % {PLAYERS}), r.id,
               'Name' || ((r.id * k * 7919) % {PLAYERS}), k,
               CASE WHEN k = 1 THEN 'won' ELSE 'timeout' END,
               CASE WHEN k = 1 THEN 100 + r.id % 500 ELSE NULL END, 300 + r.id % 97,
               500, (r.id * k * 7919) % {PLAYERS} % 5 = 0
        FROM races r, generate_series(1, 2) AS k
        ON CONFLICT DO NOTHING""",
    """INSERT INTO rating_changes (player, race_id, variant, pool, before, after, provisional)
        SELECT p.player, p.race_id, r.variant,
               CASE WHEN p.bot THEN 'bots' ELSE 'humans' END,
               1400 + p.race_id % 300, 1400 + (p.race_id * 31) % 300, p.race_id % 7 = 0
        FROM race_players p JOIN races r ON r.id = p.race_id WHERE r.rated""",
    f"""INSERT INTO player_records (player, version, name, data, race_id)
        SELECT 'p' || i, i, 'Name' || i, '\\x80'::bytea, NULL
        FROM generate_series(0, {PLAYERS - 1}) AS i""",
    f"""INSERT INTO history_lines (player, code, at, line)
        SELECT 'p' || (i % {PLAYERS}), 'H' || i, 1.6e9 + i, '\\x80'::bytea
        FROM generate_series(1, {RACES}) AS i""",
    # accounts, each with a few sessions
    f"""INSERT INTO accounts (name, name_key, password, player, created_at, password_at)
        SELECT 'Name' || i, 'name' || i, '$argon2id$', 'a' || i, 1.7e9, 1.7e9
        FROM generate_series(1, {PLAYERS}) AS i""",
    """INSERT INTO sessions (hash, account_id, created_at, last_used_at, address, user_agent)
        SELECT sha256((a.id * 10 + k)::text::bytea), a.id, 1.7e9, 1.7e9 + k, '127.0.0.1', 'x'
        FROM accounts a, generate_series(1, 3) AS k""",
    # API tokens: two of each account
    """INSERT INTO api_tokens (hash, account_id, name, scopes, created_at, last_used_at)
        SELECT sha256(('t' || (a.id * 10 + k))::text::bytea), a.id, 'token', '{race:read}',
               1.7e9 + k, NULL
        FROM accounts a, generate_series(1, 2) AS k""",
    f"""INSERT INTO deleted_players (player, deleted_at)
        SELECT 'd' || i, 1.7e9 FROM generate_series(1, {PLAYERS}) AS i""",
    # one account in two with a verified address, each with two passkeys
    """UPDATE accounts SET email = name || '@example.org', email_key = name_key || '@example.org',
        email_at = 1.7e9 WHERE id % 2 = 0""",
    """INSERT INTO passkeys (id, account_id, public_key, sign_count, name, created_at)
        SELECT sha256((a.id * 10 + k)::text::bytea), a.id, '\\xa5'::bytea, 0, 'key', 1.7e9 + k
        FROM accounts a, generate_series(1, 2) AS k""",
    # the addresses of the rated races' players; the operators' actions, a few pending
    """INSERT INTO rated_addresses (race_id, player, address, at)
        SELECT p.race_id, p.player, '198.51.100.' || (p.race_id % 200), r.finished_at
        FROM race_players p JOIN races r ON r.id = p.race_id WHERE r.rated""",
    """INSERT INTO admin_actions (at, by, action, target, race_id, reason, done_at)
        SELECT 1.7e9 + i, 'ops', 'void', 'C' || (i * 2), i * 2, 'farming',
               CASE WHEN i % 500 = 0 THEN NULL ELSE 1.7e9 + i + 1 END
        FROM generate_series(1, 3000) AS i""",
]


def store_modules() -> list[ModuleType]:
    """The modules of the server's store that keep queries in ``QUERIES``."""
    import spider_server.store as store

    found = []
    for info in pkgutil.iter_modules(store.__path__):
        module = importlib.import_module(f"{store.__name__}.{info.name}")
        if isinstance(getattr(module, "QUERIES", None), dict):
            found.append(module)
    return found


def seq_scans(plan: Any, tables: set[str]) -> list[str]:
    """The archive's tables that ``plan`` (EXPLAIN's JSON) reads whole."""
    out = []
    if isinstance(plan, dict):
        if plan.get("Node Type") == "Seq Scan" and plan.get("Relation Name") in tables:
            out.append(plan["Relation Name"])
        for value in plan.values():
            out += seq_scans(value, tables)
    elif isinstance(plan, list):
        for value in plan:
            out += seq_scans(value, tables)
    return out


def test_the_archive_modules_are_found() -> None:
    names = {m.__name__.rsplit(".", 1)[1] for m in store_modules()}
    assert {"archive", "archive_players"} <= names


def test_seq_scans_are_seen() -> None:
    plan = [{"Plan": {"Node Type": "Hash Join", "Plans": [
        {"Node Type": "Seq Scan", "Relation Name": "races"},
        {"Node Type": "Index Scan", "Relation Name": "race_players"},
    ]}}]  # fmt: skip
    assert seq_scans(plan, {"races", "race_players"}) == ["races"]
    assert seq_scans(plan, {"race_players"}) == []


async def test_every_archive_query_uses_an_index(pg_database: Any) -> None:
    from spider_server.store.archive import ArchiveStore

    archive = ArchiveStore(pg_database.url, pool_size=2)
    await archive.open()
    try:
        async with archive.connection() as conn:
            for statement in FILL:
                await conn.execute(statement)
            await conn.execute("VACUUM ANALYZE")
            tables = {
                row["tablename"]
                for row in await conn.fetch(
                    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                )
            }
            assert {"races", "race_players", "rating_changes", "player_records"} <= tables
            failures: list[str] = []
            checked = 0
            for module in store_modules():
                queries: dict[str, str] = module.QUERIES
                examples: dict[str, tuple[Any, ...]] = getattr(module, "EXAMPLES", {})
                for name, sql in queries.items():
                    where = f"{module.__name__}: {name}"
                    if name not in examples:
                        failures.append(f"{where}: no example parameters in EXAMPLES")
                        continue
                    insert = sql.lstrip().upper().startswith("INSERT")
                    for mode in ("force_custom_plan", "force_generic_plan"):
                        await conn.execute(f"SET plan_cache_mode = {mode}")
                        try:
                            # a fresh statement each time: the plan mode counts
                            stmt = await conn.prepare(f"EXPLAIN (FORMAT JSON) {sql}")
                            found = await stmt.fetchval(*examples[name])
                        except Exception as e:  # the query must at least plan
                            failures.append(f"{where}: {type(e).__name__}: {e}")
                            break
                        plan = json.loads(found) if isinstance(found, str) else found
                        if not insert:
                            for table in seq_scans(plan, tables):
                                failures.append(f"{where} ({mode}): Seq Scan on {table}")
                    checked += 1
            await conn.execute("RESET plan_cache_mode")
    finally:
        await archive.close()
    assert checked >= 20
    assert not failures, "\n".join(failures)
