"""``spider-race profile`` and ``spider-race ratings`` against a real node, after a rated
race of two players who share a name: each is shown with their id's tag."""

from __future__ import annotations

from spider_client import Client
from spider_race.cli import build_parser
from spider_race.profile_command import run_profile, run_ratings
from tests.client.client_helpers import FAST
from tests.client.test_client_players import _race_to_the_end


async def test_profile_and_ratings_print_the_race(redis_server, server_node, capsys) -> None:
    node = await server_node(redis_server.url, **FAST)
    async with (
        await Client.connect(node.url, name="zoe") as a,
        await Client.connect(node.url, name="zoe") as b,
    ):
        code = await a.create_race(variant="spider1", countdown=0, rated=True)
        await _race_to_the_end(a, b, code)
        await a.rating_changes()
        token, me, other = a.token, a.player, b.player
    assert token is not None
    args = build_parser().parse_args(["profile", other, "--url", node.url])
    assert await run_profile(args) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"zoe #{other[-4:]}")
    assert "spider1" in out and code in out and f"/r/{code}" in out and "rating 1500 ->" in out

    args = build_parser().parse_args(["profile", "--url", node.url, "--token", token])
    assert await run_profile(args) == 0
    assert capsys.readouterr().out.startswith(f"zoe #{me[-4:]}")

    # one race leaves a rating provisional: nobody is on a ladder yet
    args = build_parser().parse_args(["ratings", "spider1", "--url", node.url])
    assert await run_ratings(args) == 0
    out = capsys.readouterr().out
    assert "nobody on the humans' ladder in spider1 yet" in out and "zoe" not in out

    args = build_parser().parse_args(["ratings", "spider1", "--bots", "--url", node.url])
    assert await run_ratings(args) == 0
    assert "nobody on the bots' ladder" in capsys.readouterr().out


def test_the_terminals_results_show_rating_changes_and_tags() -> None:
    from spider_client.protocol import RatingChange, Result
    from spider_race.tui.progress import render_results

    results = [
        Result(
            rank=1,
            player="p0000aaaa",
            name="kim",
            status="won",
            time=61.0,
            runs=1,
            moves=90,
            score=600,
        ),
        Result(
            rank=2,
            player="p0000bbbb",
            name="kim",
            status="resigned",
            time=None,
            runs=0,
            moves=4,
            score=496,
        ),
    ]
    changes = [
        RatingChange(
            player="p0000aaaa",
            name="kim",
            tag="aaaa",
            before=1500,
            after=1562,
            provisional=True,
            pool="humans",
        ),
        RatingChange(
            player="p0000bbbb",
            name="kim",
            tag="bbbb",
            before=1500,
            after=1449,
            provisional=True,
            pool="humans",
        ),
    ]
    text = render_results(results, changes=changes).plain
    first, second = text.splitlines()[1:3]
    assert "kim #aaaa" in first and "rating 1500 -> 1562? (+62)" in first
    assert "kim #bbbb" in second and "rating 1500 -> 1449? (-51)" in second
    plain = render_results(results[:1]).plain
    assert "#aaaa" not in plain and "rating" not in plain
