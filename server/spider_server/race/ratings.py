"""Ratings, players' records and their histories, without I/O: a finished race in,
what to write out.

A player's rating in a variant is an ``openskill`` Plackett–Luce rating (``mu``,
``sigma``), made for free-for-all results of any number of players. It moves only in a
*rated* race (:attr:`~.RaceOptions.rated`), from the server's own ranking
(:func:`~.rank`: players of equal standing share a rank, and share it here). Humans
and bots are rated apart: each pool's players are ranked among themselves (a race that
mixes them rates its humans against its humans and its bots against its bots), so bots
climb their own ladder. No rating crosses between the pools: a record belongs to the pool
of its last race (:attr:`Record.bot`), and a player who races in the other pool (a bot
account's player that raced as a human before the upgrade, and nothing else: an
account's kind is fixed, guests are not rated) starts afresh there, every variant's
rating set back to a newcomer's (:func:`in_pool`); the ladders show a player only in
their record's pool.

Shown as one number, :func:`display`: ``round(1500 + 40 * ordinal)`` where the ordinal is
``mu - 3 * sigma`` (openskill's conservative estimate; a new player's is 0, so everyone
starts at 1500 and a player is not shown above their skill while it is uncertain). A
rating is *provisional* (shown with a ``?``) while ``sigma`` is above
:data:`PROVISIONAL_SIGMA`.

Every finished race, rated or not, adds a line to each player's history and counts in
their record per variant (races, wins, best time, streaks). :func:`settle` decides it
all; the store (:mod:`..store.ratings`) writes it once per race with a check-and-set on
every player's record version.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from openskill.models import PlackettLuce

__all__ = [
    "DISPLAY_BASE",
    "DISPLAY_SCALE",
    "HUMANS",
    "BOTS",
    "PROVISIONAL_SIGMA",
    "OPPONENTS_KEPT",
    "PairLimit",
    "MAX_CHANGE",
    "MIN_MOVERS",
    "Change",
    "Line",
    "Placing",
    "Record",
    "Settlement",
    "VariantRecord",
    "display",
    "in_pool",
    "pool_of",
    "provisional",
    "rate",
    "settle",
    "short_id",
]

MODEL = PlackettLuce()
"""The rating model: openskill's defaults (mu 25, sigma 25/3)."""
DISPLAY_BASE = 1500
DISPLAY_SCALE = 40
PROVISIONAL_SIGMA = 5.0
"""A rating whose sigma is above this is provisional (on no ladder)."""
MAX_CHANGE = 200
"""The most a rating shown moves in one race, up or down (the update is cut back to it)."""
MIN_MOVERS = 2
"""A rated race moves ratings only when at least this many of its players made a move:
else it is an abort, unrated for everyone."""
HUMANS = "humans"
BOTS = "bots"


def display(mu: float, sigma: float) -> int:
    """The rating shown: ``round(1500 + 40 * (mu - 3 * sigma))``."""
    return round(DISPLAY_BASE + DISPLAY_SCALE * (mu - 3 * sigma))


def provisional(sigma: float) -> bool:
    """Whether a rating is still provisional (too uncertain to rank on)."""
    return sigma > PROVISIONAL_SIGMA


def pool_of(bot: bool) -> str:
    """The pool a player is rated in: ``bots`` or ``humans``."""
    return BOTS if bot else HUMANS


def short_id(player: str) -> str:
    """The last 4 characters of a player id: shown beside a name wherever two players
    could be confused (names are not unique)."""
    return player[-4:]


def capped(old: tuple[float, float], mu: float, sigma: float) -> tuple[float, float]:
    """The new (``mu``, ``sigma``) of a rating that was ``old``, its mu cut back so that the
    rating shown moves :data:`MAX_CHANGE` at most (sigma as the update left it)."""
    before, after = display(*old), display(mu, sigma)
    if abs(after - before) <= MAX_CHANGE:
        return mu, sigma
    target = before + (MAX_CHANGE if after > before else -MAX_CHANGE)
    return (target - DISPLAY_BASE) / DISPLAY_SCALE + 3 * sigma, sigma


def rate(
    ranking: Sequence[tuple[str, int]], ratings: Mapping[str, tuple[float, float]]
) -> dict[str, tuple[float, float]]:
    """New (mu, sigma) of each player of ``ranking`` ((player, rank) best first, equal ranks
    tied), from ``ratings`` (a player missing there starts at the model's default): one
    Plackett–Luce update. Fewer than two players: nobody changes."""
    if len(ranking) < 2:
        return {p: ratings.get(p, (MODEL.mu, MODEL.sigma)) for p, _ in ranking}
    teams = []
    for player, _ in ranking:
        mu, sigma = ratings.get(player, (MODEL.mu, MODEL.sigma))
        teams.append([MODEL.rating(mu=mu, sigma=sigma)])
    rated = MODEL.rate(teams, ranks=[r for _, r in ranking])
    return {p: (t[0].mu, t[0].sigma) for (p, _), t in zip(ranking, rated, strict=True)}


@dataclass(kw_only=True)
class VariantRecord:
    """A player's record in one variant."""

    mu: float = MODEL.mu
    sigma: float = MODEL.sigma
    rated: int = 0
    """Rated races played."""
    played: int = 0
    won: int = 0
    best_time: float | None = None
    streak: int = 0
    """Races won in a row, up to the last one."""
    best_streak: int = 0
    best_rating: int | None = None
    """The best rating shown after a rated race (not provisional)."""
    history: list[tuple[float, int]] = field(default_factory=list)
    """(time, rating shown) after each of the last rated races, oldest first (capped)."""
    opponents: list[tuple[float, str]] = field(default_factory=list)
    """(time, opponent) of each opponent of the pool in each rated race of the pair
    window (:class:`PairLimit`), oldest first: how often a pair raced rated lately."""

    def raced(self, opponent: str, since: float) -> int:
        """Rated races against ``opponent`` since ``since``."""
        return sum(1 for at, who in self.opponents if who == opponent and at >= since)

    @property
    def rating(self) -> int:
        return display(self.mu, self.sigma)

    @property
    def provisional(self) -> bool:
        return provisional(self.sigma)

    def fields(self) -> dict[str, Any]:
        return {
            "mu": self.mu,
            "sigma": self.sigma,
            "rated": self.rated,
            "played": self.played,
            "won": self.won,
            "best_time": self.best_time,
            "streak": self.streak,
            "best_streak": self.best_streak,
            "best_rating": self.best_rating,
            "history": [list(h) for h in self.history],
            "opponents": [list(o) for o in self.opponents],
        }

    @classmethod
    def from_fields(cls, f: Mapping[str, Any]) -> VariantRecord:
        return cls(
            mu=float(f.get("mu", MODEL.mu)),
            sigma=float(f.get("sigma", MODEL.sigma)),
            rated=int(f.get("rated", 0)),
            played=int(f.get("played", 0)),
            won=int(f.get("won", 0)),
            best_time=f.get("best_time"),
            streak=int(f.get("streak", 0)),
            best_streak=int(f.get("best_streak", 0)),
            best_rating=f.get("best_rating"),
            history=[(float(t), int(r)) for t, r in f.get("history", [])],
            opponents=[(float(t), str(o)) for t, o in f.get("opponents", [])],
        )


RATING_HISTORY = 50
"""Points of rating history kept per player and variant."""
OPPONENTS_KEPT = 1000
"""The most (time, opponent) entries a variant record keeps (the oldest go first)."""


@dataclass(frozen=True)
class PairLimit:
    """A player is rated on the ranking restricted to themselves and the opponents they
    have raced fewer than ``races`` rated races with in the last ``window`` seconds (a
    player with no such opponent is unrated in that race): the same opponents over and
    over move nobody's rating."""

    races: int = 3
    window: float = 86400.0


@dataclass(kw_only=True)
class Record:
    """A player's record: name, pool, and per variant. ``version`` counts its writes (the
    check-and-set of every update)."""

    player: str
    name: str = ""
    bot: bool = False
    version: int = 0
    variants: dict[str, VariantRecord] = field(default_factory=dict)

    def fields(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "bot": self.bot,
            "variants": {v: r.fields() for v, r in self.variants.items()},
        }

    @classmethod
    def from_fields(cls, player: str, version: int, f: Mapping[str, Any]) -> Record:
        return cls(
            player=player,
            name=str(f.get("name", "")),
            bot=bool(f.get("bot", False)),
            version=version,
            variants={v: VariantRecord.from_fields(r) for v, r in f.get("variants", {}).items()},
        )


def in_pool(record: Record, bot: bool) -> Record:
    """``record`` as the player's in the pool of ``bot``: itself when it is that pool's (or
    has no rated race yet), else with every variant's rating a newcomer's (its counts of
    races, wins and streaks kept): a rating never crosses between the ladders."""
    if record.bot == bot or not any(vr.rated for vr in record.variants.values()):
        return replace(record, bot=bot)
    fresh = {
        v: replace(vr, mu=MODEL.mu, sigma=MODEL.sigma, rated=0, best_rating=None, history=[])
        for v, vr in record.variants.items()
    }
    return replace(record, bot=bot, variants=fresh)


@dataclass(frozen=True, kw_only=True)
class Placing:
    """One player's line of a finished race, as rating and history need it."""

    player: str
    name: str
    rank: int
    status: str
    time: float | None
    bot: bool = False
    guest: bool = False
    """The player has no account: never rated (rated races are between accounts)."""
    moves: int = 0
    """Moves the player made (a race where fewer than :data:`MIN_MOVERS` players made one
    is unrated)."""


@dataclass(kw_only=True)
class Change:
    """A player's rating change in a rated race (the end screen shows it)."""

    player: str
    name: str
    before: int
    after: int
    provisional: bool
    pool: str
    mu_before: float | None = None
    sigma_before: float | None = None
    mu_after: float | None = None
    sigma_after: float | None = None
    """The rating's mu and sigma before and after the race (an operator's void of the race
    moves them back by the difference)."""


@dataclass(kw_only=True)
class Line:
    """One race in a player's history (the last races, newest first)."""

    code: str
    variant: str
    at: float
    rank: int
    of: int
    status: str
    time: float | None
    rated: bool
    before: int | None = None
    after: int | None = None


@dataclass(kw_only=True)
class Settlement:
    """What a finished race writes: every player's new record (with the version it was
    decided on, ``Record.version``), their history lines, and the rating changes."""

    records: list[Record]
    lines: dict[str, Line]
    changes: list[Change]


def _rated(
    ranking: list[tuple[str, int]],
    current: Mapping[str, tuple[float, float]],
    records: Mapping[str, Record],
    variant: str,
    now: float,
    pairs: PairLimit | None,
) -> dict[str, tuple[float, float]]:
    """New (mu, sigma) of the players of one pool's ``ranking``: each on the ranking
    restricted to the opponents :class:`PairLimit` leaves them (the whole one when it
    leaves every opponent), cut back by :func:`capped`; a player left no opponent is
    left out (unrated)."""
    limit = pairs or PairLimit()
    since = now - limit.window
    whole: dict[str, tuple[float, float]] | None = None
    out: dict[str, tuple[float, float]] = {}
    mine = {p: records[p].variants.get(variant) or VariantRecord() for p, _ in ranking}
    for player, _ in ranking:
        kept = [  # a pair's count as either record has it (the larger)
            (q, r)
            for q, r in ranking
            if q == player
            or max(mine[player].raced(q, since), mine[q].raced(player, since)) < limit.races
        ]
        if len(kept) < 2:
            continue  # every opponent raced with them too often lately: unrated
        if len(kept) == len(ranking):
            whole = whole or rate(ranking, current)
            mu, sigma = whole[player]
        else:
            mu, sigma = rate(kept, current)[player]
        out[player] = capped(current.get(player, (MODEL.mu, MODEL.sigma)), mu, sigma)
    return out


def settle(
    *,
    code: str,
    variant: str,
    rated: bool,
    placings: Sequence[Placing],
    records: Mapping[str, Record],
    now: float,
    pairs: PairLimit | None = None,
) -> Settlement:
    """The records, history lines and rating changes of a finished race: every player's
    counts per variant (played, won, best time, streaks) move; with ``rated`` (and at least
    :data:`MIN_MOVERS` players who made a move: else an abort, unrated), each pool's
    players are rated by their ranks among themselves (:func:`rate`), guests never (none
    is let into a rated race; one in a race from before is left out of its ranking and
    keeps its rating as it was, frozen), each on the ranking restricted to the opponents of
    ``pairs`` (default :class:`PairLimit`). ``records`` are the
    players' records now (a player without one starts afresh); the records returned carry
    the version they were read at."""
    old: dict[str, Record] = {}
    for pl in placings:
        rec = records.get(pl.player) or Record(player=pl.player)
        old[pl.player] = in_pool(rec, pl.bot)
    new_ratings: dict[str, tuple[float, float]] = {}
    mates: dict[str, list[str]] = {}
    """Each rated player's opponents of their pool (counted for :class:`PairLimit`)."""
    if rated and sum(pl.moves > 0 for pl in placings) < MIN_MOVERS:
        rated = False  # an abort: nobody (or one player alone) played
    if rated:
        for pool in (HUMANS, BOTS):
            ranking = [
                (pl.player, pl.rank) for pl in placings if pool_of(pl.bot) == pool and not pl.guest
            ]
            current = {
                p: (vr.mu, vr.sigma)
                for p, _ in ranking
                if (vr := old[p].variants.get(variant)) is not None
            }
            if len(ranking) >= 2:
                new_ratings.update(_rated(ranking, current, old, variant, now, pairs))
                mates.update({p: [q for q, _ in ranking if q != p] for p, _ in ranking})
    out: list[Record] = []
    lines: dict[str, Line] = {}
    changes: list[Change] = []
    for pl in placings:
        rec = old[pl.player]
        vr = rec.variants.get(variant) or VariantRecord()
        before = vr.rating
        mu_before, sigma_before = vr.mu, vr.sigma
        won = pl.status == "won"
        vr = replace(
            vr,
            played=vr.played + 1,
            won=vr.won + (1 if won else 0),
            streak=vr.streak + 1 if won else 0,
            history=list(vr.history),
        )
        vr.best_streak = max(vr.best_streak, vr.streak)
        if won and pl.time is not None and (vr.best_time is None or pl.time < vr.best_time):
            vr.best_time = pl.time
        if pl.player in mates:  # the pairs of this rated race, within the window
            since = now - (pairs or PairLimit()).window
            lately = [o for o in vr.opponents if o[0] >= since]
            vr.opponents = (lately + [(now, q) for q in mates[pl.player]])[-OPPONENTS_KEPT:]
        moved = pl.player in new_ratings
        if moved:
            vr.mu, vr.sigma = new_ratings[pl.player]
            vr.rated += 1
            vr.history = (vr.history + [(now, vr.rating)])[-RATING_HISTORY:]
            if not vr.provisional and (vr.best_rating is None or vr.rating > vr.best_rating):
                vr.best_rating = vr.rating
            changes.append(
                Change(
                    player=pl.player,
                    name=pl.name,
                    before=before,
                    after=vr.rating,
                    provisional=vr.provisional,
                    pool=pool_of(pl.bot),
                    mu_before=mu_before,
                    sigma_before=sigma_before,
                    mu_after=vr.mu,
                    sigma_after=vr.sigma,
                )
            )
        variants = {**rec.variants, variant: vr}
        out.append(replace(rec, name=pl.name, bot=pl.bot, variants=variants))
        lines[pl.player] = Line(
            code=code,
            variant=variant,
            at=now,
            rank=pl.rank,
            of=len(placings),
            status=pl.status,
            time=pl.time,
            rated=moved,
            before=before if moved else None,
            after=vr.rating if moved else None,
        )
    return Settlement(records=out, lines=lines, changes=changes)
