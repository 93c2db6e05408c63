"""The solver workers' policy without processes: priorities, turns by owner, quotas,
preemption and cancellation, all synchronous."""

from __future__ import annotations

import pytest

from spider_server.errors import RateLimited
from spider_server.workers import (
    HintPending,
    Job,
    JobPolicy,
    JobState,
    Priority,
    ProofCapReached,
    QueueFull,
)


def job(
    priority: Priority = Priority.REFILL,
    owner: str = "",
    *,
    player: str | None = None,
    identity: str | None = None,
    address: str | None = None,
) -> Job:
    kind = "hint" if priority is Priority.HINT else "prove"
    return Job(kind, (), priority, owner, 10.0, player=player, identity=identity, address=address)


def hint(player: str) -> Job:
    return job(Priority.HINT, player, player=player)


def take_all(policy: JobPolicy) -> list[Job]:
    taken = []
    while (j := policy.take()) is not None:
        taken.append(j)
    return taken


def test_hints_before_races_before_refills() -> None:
    policy = JobPolicy(yield_after=0)
    refill, race, h = job(Priority.REFILL), job(Priority.RACE, "id1"), hint("p")
    for j in (refill, race, h):
        policy.submit(j)
    assert policy.queued == 3
    assert take_all(policy) == [h, race, refill]
    assert all(j.state is JobState.RUNNING for j in (refill, race, h))
    assert policy.running == 3 and policy.queued == 0


def test_a_finished_races_par_comes_after_hints_and_proofs_and_before_refills() -> None:
    policy = JobPolicy(yield_after=0)
    refill, par = job(Priority.REFILL, "pool"), job(Priority.PAR, "par")
    race, h = job(Priority.RACE, "id1"), hint("p")
    for j in (refill, par, race, h):
        policy.submit(j)
    assert take_all(policy) == [h, race, par, refill]


def test_a_refill_is_preempted_for_a_waiting_par() -> None:
    policy = JobPolicy()
    refill = job(Priority.REFILL, "pool")
    policy.submit(refill)
    assert policy.take() is refill
    par = job(Priority.PAR, "par")
    policy.submit(par)
    assert policy.victim() is refill  # the players' end screens wait for the par
    policy.requeue(refill)
    assert take_all(policy) == [par, refill]


def test_owners_take_turns_within_a_priority() -> None:
    policy = JobPolicy(proofs_per_identity=10)
    a = [job(Priority.RACE, "a", identity="a") for _ in range(3)]
    b = [job(Priority.RACE, "b", identity="b") for _ in range(2)]
    c = job(Priority.RACE, "c", identity="c")
    for j in (*a, *b, c):
        policy.submit(j)
    assert take_all(policy) == [a[0], b[0], c, a[1], b[1], a[2]]


def test_an_owner_arriving_later_waits_at_most_one_turn() -> None:
    policy = JobPolicy(proofs_per_identity=10)
    flood = [job(Priority.RACE, "flood", identity="flood") for _ in range(5)]
    for j in flood:
        policy.submit(j)
    assert policy.take() is flood[0]
    late = job(Priority.RACE, "late", identity="late")
    policy.submit(late)
    assert policy.take() is flood[1]
    assert policy.take() is late


def test_a_lower_priority_gets_a_turn_after_yield_after_higher_jobs() -> None:
    policy = JobPolicy(yield_after=2)
    par = job(Priority.PAR, "par")
    policy.submit(par)
    hints = [hint(f"p{i}") for i in range(4)]
    for h in hints:
        policy.submit(h)
    order = take_all(policy)
    assert order == [hints[0], hints[1], par, hints[2], hints[3]]
    assert par.turn and not hints[0].turn


def test_refills_get_no_turn_against_starvation() -> None:
    """Nobody waits for a refill, and a job on its turn is not preempted: a refill's turn
    would hold players' hints and races for a whole resting proof."""
    policy = JobPolicy(yield_after=1)
    refill = job(Priority.REFILL, "pool")
    policy.submit(refill)
    hints = [hint(f"p{i}") for i in range(3)]
    for h in hints:
        policy.submit(h)
    assert take_all(policy) == [*hints, refill]
    assert not refill.turn


def test_strict_priorities_when_yield_after_is_zero() -> None:
    policy = JobPolicy(yield_after=0)
    refill = job(Priority.REFILL)
    policy.submit(refill)
    hints = [hint(f"p{i}") for i in range(12)]
    for h in hints:
        policy.submit(h)
    assert take_all(policy) == [*hints, refill]


def test_one_hint_at_a_time_per_player() -> None:
    policy = JobPolicy()
    first = hint("p")
    policy.submit(first)
    with pytest.raises(HintPending):
        policy.submit(hint("p"))  # queued
    other = hint("q")
    policy.submit(other)  # another player is not held back
    assert policy.take() is first
    with pytest.raises(HintPending):
        policy.submit(hint("p"))  # running
    policy.finish(first)
    assert first.state is JobState.DONE
    again = hint("p")
    policy.submit(again)
    assert policy.queued == 2


def test_refusals_are_rate_limited_errors_and_change_nothing() -> None:
    policy = JobPolicy()
    policy.submit(hint("p"))
    refused = hint("p")
    with pytest.raises(RateLimited) as e:
        policy.submit(refused)
    assert e.value.code == "rate_limited"
    assert policy.queued == 1 and refused.state is JobState.QUEUED
    assert take_all(policy) != [refused]


def test_cap_of_proofs_per_identity() -> None:
    policy = JobPolicy(proofs_per_identity=2, proofs_per_address=10)
    one, two = job(Priority.RACE, "a", identity="a"), job(Priority.RACE, "a", identity="a")
    policy.submit(one)
    policy.submit(two)
    with pytest.raises(ProofCapReached):
        policy.submit(job(Priority.RACE, "a", identity="a"))
    policy.submit(job(Priority.RACE, "b", identity="b"))
    assert policy.pending(identity="a") == 2
    assert policy.take() is one  # running still counts
    with pytest.raises(ProofCapReached):
        policy.submit(job(Priority.RACE, "a", identity="a"))
    policy.finish(one)
    assert policy.pending(identity="a") == 1
    policy.submit(job(Priority.RACE, "a", identity="a"))
    assert policy.cancel(two)  # a dropped job frees its place too
    assert policy.pending(identity="a") == 1


def test_cap_of_proofs_per_address_across_identities() -> None:
    policy = JobPolicy(proofs_per_identity=5, proofs_per_address=3)
    for i in range(3):
        policy.submit(job(Priority.RACE, f"id{i}", identity=f"id{i}", address="10.0.0.1"))
    with pytest.raises(ProofCapReached):
        policy.submit(job(Priority.RACE, "fresh", identity="fresh", address="10.0.0.1"))
    policy.submit(job(Priority.RACE, "x", identity="x", address="10.0.0.2"))
    assert policy.pending(address="10.0.0.1") == 3
    assert policy.pending(identity="fresh") == 0  # the refused job counted nowhere


def test_each_priority_queue_is_bounded() -> None:
    policy = JobPolicy(queue_limit=2)
    policy.submit(job(Priority.REFILL))
    policy.submit(job(Priority.REFILL))
    with pytest.raises(QueueFull):
        policy.submit(job(Priority.REFILL))
    policy.submit(hint("p"))  # another priority has its own bound
    policy.take()  # the hint runs: refills still fill their queue
    with pytest.raises(QueueFull):
        policy.submit(job(Priority.REFILL))
    policy.take()  # a refill leaves the queue
    policy.submit(job(Priority.REFILL))
    assert policy.queued_at(Priority.REFILL) == 2


def test_cancel_drops_a_queued_job_only() -> None:
    policy = JobPolicy()
    a, b, c = job(owner="a"), job(owner="b"), job(owner="a")
    for j in (a, b, c):
        policy.submit(j)
    assert policy.cancel(b)
    assert not policy.cancel(b)
    running = policy.take()
    assert running is a
    assert not policy.cancel(a)  # running: the process side kills its worker instead
    assert take_all(policy) == [c]
    assert b.state is JobState.DONE


def test_a_refill_is_preempted_for_a_hint_and_runs_again_first() -> None:
    policy = JobPolicy()
    refill, other = job(Priority.REFILL, "pool"), job(Priority.REFILL, "pool2")
    policy.submit(refill)
    policy.submit(other)
    assert policy.take() is refill
    assert policy.victim() is None  # nothing more urgent waits
    h = hint("p")
    policy.submit(h)
    assert policy.victim(coming=1) is None  # a starting worker will take the hint
    assert policy.victim() is refill
    policy.requeue(refill)
    assert policy.victim() is None
    assert take_all(policy) == [h, refill, other]


def test_a_refill_is_preempted_even_after_many_higher_jobs() -> None:
    policy = JobPolicy(yield_after=1)
    refill = job(Priority.REFILL)
    policy.submit(refill)
    policy.submit(hint("p"))
    policy.submit(hint("q"))
    assert policy.take().priority is Priority.HINT
    assert policy.take().priority is Priority.HINT
    assert policy.take() is refill and not refill.turn
    policy.submit(hint("r"))
    assert policy.victim() is refill


def test_drain_ends_every_job_and_frees_the_quotas() -> None:
    policy = JobPolicy(proofs_per_identity=1)
    h, p = hint("p"), job(Priority.RACE, "a", identity="a")
    policy.submit(h)
    policy.submit(p)
    policy.take()
    assert set(policy.drain()) == {h, p}
    assert policy.queued == 0 and policy.running == 0
    policy.submit(hint("p"))
    policy.submit(job(Priority.RACE, "a", identity="a"))


def prefetch(owner: str = "race") -> Job:
    return Job("prefetch", (), Priority.PREFETCH, owner, 10.0)


def test_prefetches_come_last_and_get_no_turn_against_starvation() -> None:
    policy = JobPolicy(yield_after=1)
    p, r1, r2, r3 = prefetch(), job(owner="pool"), job(owner="pool"), job(owner="pool")
    for j in (p, r1, r2, r3):
        policy.submit(j)
    h = hint("ann")
    policy.submit(h)
    assert take_all(policy) == [h, r1, r2, r3, p]
    assert not p.turn


def test_a_running_prefetch_is_preempted_before_a_refill() -> None:
    policy = JobPolicy()
    r, p = job(owner="pool"), prefetch()
    policy.submit(r)
    policy.submit(p)
    assert take_all(policy) == [r, p]
    policy.submit(hint("ann"))
    assert policy.victim() is p
    policy.requeue(p)  # its worker stops it, and is free soon: nothing more to stop
    assert policy.victim(coming=1) is None
    assert policy.take() is not p and policy.queued_at(Priority.PREFETCH) == 1


def test_the_hint_cache_is_bounded_in_entries_and_bytes() -> None:
    from spider_server.runners.hints import HintCache
    from spider_server.workers import Suggested

    cache = HintCache(entries=2, limit=10_000)
    hint_of = Suggested("unknown", ("a1b",), 10)
    for text in ("one", "two", "three"):
        cache.put(text, 10, hint_of)
    assert len(cache) == 2 and cache.get("one", 10) is None and cache.get("three", 10) is hint_of
    assert cache.get("three", 20) is None  # another budget, another hint
    small = HintCache(entries=100, limit=200)
    for i in range(10):
        small.put("x" * 50 + str(i), 10, hint_of)
    assert small.bytes <= 200 and len(small) == 1
    assert small.get("x" * 50 + "9", 10) is hint_of  # the most recent kept


class Clock:
    """The policy's clock, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def daily(owner: str = "asker") -> Job:
    return Job("prove", (), Priority.DAILY, owner, 10.0, identity=owner)


def suggest(player: str) -> Job:
    return Job("suggest", (), Priority.HINT, player, 10.0, player=player)


def test_a_days_deal_is_proven_after_races_and_pars_and_before_refills() -> None:
    policy = JobPolicy(yield_after=0)
    refill, d, par, race = job(owner="pool"), daily(), job(Priority.PAR, "par"), job(Priority.RACE)
    for j in (refill, d, par, race):
        policy.submit(j)
    assert take_all(policy) == [race, par, d, refill]


def test_a_running_daily_proof_is_stopped_for_a_race_and_runs_again_after_it() -> None:
    policy = JobPolicy()
    d = daily()
    policy.submit(d)
    assert policy.take() is d
    refill = job(owner="pool")
    policy.submit(refill)
    assert policy.victim() is None  # a refill waiting stops no daily proof
    race = job(Priority.RACE, "honest", identity="honest")
    policy.submit(race)
    assert policy.victim(coming=1) is None  # a worker soon free takes the race's proof
    assert policy.victim() is d
    policy.requeue(d)
    assert take_all(policy) == [race, d, refill]


def test_a_running_refill_is_stopped_for_a_waiting_daily_proof_but_no_daily_for_a_daily() -> None:
    policy = JobPolicy()
    refill, first = job(owner="pool"), daily("a")
    for j in (refill, first):
        policy.submit(j)
    assert take_all(policy) == [first, refill]
    policy.submit(daily("b"))
    assert policy.victim() is refill


def test_one_hint_stops_one_daily_proof_not_every_one() -> None:
    policy = JobPolicy()
    first, second = daily("a"), daily("b")
    for j in (first, second):
        policy.submit(j)
    assert take_all(policy) == [first, second]
    policy.submit(hint("p"))
    stopped = policy.victim()
    assert stopped in (first, second)
    policy.requeue(stopped)  # the pool's loop: the stopped worker is coming for the hint
    assert policy.victim(coming=1) is None  # the proof put back stops no other


def test_a_daily_proof_taken_on_its_turn_is_not_stopped() -> None:
    policy = JobPolicy(yield_after=1)
    d = daily()
    policy.submit(d)
    policy.submit(job(Priority.RACE, "a", identity="a"))
    policy.submit(job(Priority.RACE, "b", identity="b"))
    assert policy.take().priority is Priority.RACE
    assert policy.take() is d and d.turn
    assert policy.victim() is None


def test_the_least_served_owner_goes_first_and_service_decays() -> None:
    clock = Clock()
    policy = JobPolicy(clock=clock, half_life=60.0, fair_margin=0.5, proofs_per_identity=10)
    first = job(Priority.RACE, "flood", identity="flood")
    policy.submit(first)
    assert policy.take() is first
    clock.now += 4.0
    policy.finish(first)
    assert policy.service("flood", Priority.RACE) == pytest.approx(4.0)
    assert policy.service("flood", Priority.HINT) == 0.0  # counted within its priority
    clock.now += 60.0
    assert policy.service("flood", Priority.RACE) == pytest.approx(2.0)  # half, a half-life on
    flood = [job(Priority.RACE, "flood", identity="flood") for _ in range(2)]
    for j in flood:
        policy.submit(j)
    light = job(Priority.RACE, "light", identity="light")
    policy.submit(light)
    # flood is first in line but was served 2 s, light nothing: light goes first
    assert take_all(policy) == [light, flood[0], flood[1]]


def test_owners_within_the_margin_keep_their_turns() -> None:
    clock = Clock()
    policy = JobPolicy(clock=clock, fair_margin=0.5, proofs_per_identity=10)
    for owner, seconds in (("a", 0.4), ("b", 0.0)):
        j = job(Priority.RACE, owner, identity=owner)
        policy.submit(j)
        policy.take()
        clock.now += seconds
        policy.finish(j)
    a, b = job(Priority.RACE, "a", identity="a"), job(Priority.RACE, "b", identity="b")
    policy.submit(a)
    policy.submit(b)
    assert take_all(policy) == [a, b]  # a was served 0.4 s more: within the margin


def test_a_flooders_running_hint_is_stopped_once_for_a_player_who_hardly_asked() -> None:
    clock = Clock()
    policy = JobPolicy(clock=clock, stoppable=frozenset({"suggest"}))
    for _ in range(3):  # the flooder has had three hints of a second each
        j = suggest("flood")
        policy.submit(j)
        policy.take()
        clock.now += 1.0
        policy.finish(j)
    spam = suggest("flood")
    policy.submit(spam)
    assert policy.take() is spam
    other = suggest("flood2")  # a second flooder, served as little as the honest player
    honest = suggest("honest")
    policy.submit(honest)
    assert policy.victim(coming=1) is None  # a worker soon free takes the honest hint
    assert policy.victim() is spam
    policy.requeue(spam)
    policy.submit(other)
    assert policy.take() is honest
    # first in line again, but a newcomer served less goes ahead of it
    assert take_all(policy) == [other, spam]
    policy.finish(honest)
    policy.finish(other)
    policy.submit(suggest("honest2"))
    assert policy.victim() is None  # spared: a job is preempted so once at most


def test_peers_and_unstoppable_jobs_are_not_preempted_for_fairness() -> None:
    clock = Clock()
    policy = JobPolicy(clock=clock, stoppable=frozenset({"suggest"}))
    for player in ("p", "q"):
        j = suggest(player)
        policy.submit(j)
        policy.take()
        clock.now += 2.0
        policy.finish(j)
    running = suggest("p")
    policy.submit(running)
    assert policy.take() is running
    policy.submit(suggest("q"))
    assert policy.victim() is None  # p and q were served alike
    killed_to_stop = hint("r")  # a ``hint`` is stopped by killing its worker: never so
    policy2 = JobPolicy(clock=clock, stoppable=frozenset({"suggest"}))
    heavy = hint("heavy")
    policy2.submit(heavy)
    policy2.take()
    clock.now += 5.0
    policy2.finish(heavy)
    again = hint("heavy")
    policy2.submit(again)
    policy2.take()
    policy2.submit(killed_to_stop)
    assert policy2.victim() is None
