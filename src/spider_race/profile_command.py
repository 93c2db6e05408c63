"""``spider-race profile [NAME-OR-ID]`` and ``spider-race ratings [VARIANT]``: a player's
profile and a variant's rating leaderboard, printed as text.

A name is not unique: the profile asked by name is that of the player of that name who
finished a race last, and every player is shown with the last 4 characters of their id
(``alice #d0b7``). Without a name or id, the profile is the one of ``--token``'s player (a
token from ``welcome``; without one the command speaks as a new player, who has none).
"""

from __future__ import annotations

import argparse
import time

from spider_client import Client
from spider_client import protocol as p

__all__ = ["format_ladder", "format_profile", "run_profile", "run_ratings"]


def _rating(rating: int, provisional: bool) -> str:
    return f"{rating}{'?' if provisional else ''}"


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


def format_profile(reply: p.ProfileReply, *, url: str = "") -> str:
    """A profile as text: per variant (races, wins, win rate, best time, streaks, rating),
    then the last races with their replays' links (``url``: the page's address)."""
    if not reply.found:
        return f"no finished race of {reply.name or reply.player or 'yours'} yet"
    head = f"{reply.name} #{reply.tag}" + (" (bot)" if reply.bot else "")
    lines = [head, ""]
    lines.append("variant           races  won  win rate  best time  streak  best  rating")
    for v in reply.variants:
        rating = _rating(v.rating, v.provisional) if v.rated else "-"
        lines.append(
            f"{v.variant[:16]:<16}  {v.played:>5}  {v.won:>3}  {v.win_rate:>8.0%}"
            f"  {_clock(v.best_time):>9}  {v.streak:>6}  {v.best_streak:>4}  {rating:>6}"
        )
    if reply.races:
        lines += ["", "last races"]
    for r in reply.races:
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(r.at))
        rated = f"  rating {r.before} -> {r.after}" if r.rated else ""
        won = f" in {_clock(r.time)}" if r.time is not None else ""
        lines.append(
            f"{when}  {r.code}  {r.variant}  #{r.rank} of {r.of}  {r.status}{won}{rated}"
            f"  {url}{r.replay}"
        )
    return "\n".join(lines)


def format_ladder(reply: p.RatingLeaderboardReply) -> str:
    """A rating leaderboard as text, the asker's own line last when not in the top."""
    if not reply.entries:
        return (
            f"nobody on the {reply.pool}' ladder in {reply.variant} yet (a rating is on it"
            " once it is not provisional: about 20 rated races)"
        )
    lines = [f"{reply.variant} · {reply.pool}", "rank  player                          rating"]
    rows = list(reply.entries)
    if reply.me is not None and all(e.player != reply.me.player for e in rows):
        rows.append(reply.me)
    for e in rows:
        name = f"{e.name} #{e.tag}"
        lines.append(f"{e.rank:>4}  {name[:30]:<30}  {_rating(e.rating, e.provisional):>6}")
    return "\n".join(lines)


def _page(url: str) -> str:
    """The page's address of a websocket URL (``ws://host:port/ws`` -> ``http://host:port``)."""
    base = url.split("/ws")[0]
    return base.replace("wss://", "https://").replace("ws://", "http://")


async def run_profile(args: argparse.Namespace) -> int:
    """Print the profile of ``args.who`` (a name or an id; by default ``--token``'s)."""
    async with await Client.connect(args.url, token=args.token) as client:
        reply = await client.profile(args.who)
    print(format_profile(reply, url=_page(args.url)))
    return 0


async def run_ratings(args: argparse.Namespace) -> int:
    """Print a variant's rating leaderboard (``--bots``: the bot ladder)."""
    async with await Client.connect(args.url, token=args.token) as client:
        reply = await client.rating_leaderboard(args.variant, "bots" if args.bots else "humans")
    print(format_ladder(reply))
    return 0
