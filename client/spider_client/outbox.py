"""What the client has sent and waits an answer for, and how fast it may send.

:class:`Outbox` holds the requests by their ``req`` id, the one action in flight, and one
timer that sends again whatever has gone unanswered for ``resend_after`` seconds; it keeps
``send_interval`` between frames and pauses when the server says ``rate_limited``. It sends
on the connection its owner points it to (none while the connection is down: then nothing
is sent, and the owner sends everything waiting again once it is back,
:meth:`Outbox.resend_all`). The answers come in through :meth:`Outbox.resolve`,
:meth:`Outbox.take_ack` and :meth:`Outbox.take_error`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from . import protocol as p
from ._wire import write_now
from .errors import RequestInterrupted, SpiderClientError, error_from_message

__all__ = ["Outbox", "ActionMessage"]

log = logging.getLogger("spider_client")

ActionMessage = p.MoveAction | p.Undo | p.Resign
"""An action: it carries the player's next ``seq`` and is answered by an ``ack``."""


@dataclass
class _Request:
    message: Any
    future: asyncio.Future[Any]
    repeatable: bool


@dataclass
class _Action:
    message: ActionMessage
    future: asyncio.Future[p.Ack]

    @property
    def seq(self) -> int:
        return self.message.seq


@dataclass(eq=False)
class _Unanswered:
    """A request or action sent and not answered yet."""

    message: Any
    future: asyncio.Future[Any]
    resends: int | None
    """Resends allowed (None: no bound)."""
    due: float
    """Loop time at which it is sent again, unless answered."""
    sent: int = 0
    sending: bool = False


def _action_text(message: ActionMessage) -> str:
    """What an ack of this action says in its ``move`` field."""
    if isinstance(message, p.MoveAction):
        return message.move
    return "undo" if isinstance(message, p.Undo) else "resign"


class Outbox:
    """The requests and the action waiting for their answer, sent on ``connection()`` (the
    websocket now, or None while there is none)."""

    def __init__(
        self,
        connection: Callable[[], ClientConnection | None],
        *,
        resend_after: float,
        rate_limit_pause: float,
    ) -> None:
        self._connection = connection
        self.resend_after = resend_after
        """Seconds without an answer after which a request or action is sent again."""
        self.rate_limit_pause = rate_limit_pause
        """Seconds nothing is sent after the server said ``rate_limited``."""
        self.send_interval = 0.0
        """Seconds kept between two frames sent; 0 at first, it grows each time the server
        says ``rate_limited``."""
        self.lost: SpiderClientError | None = None
        """Set by :meth:`give_up`: what every request and action then fails with."""
        self.closing = False
        """Set by the owner when it closes: the resend timer is not armed again."""
        self._requests: dict[int, _Request] = {}
        self._req_ids = itertools.count(1)
        self._action: _Action | None = None
        self._action_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._send_lock = asyncio.Lock()
        self._unanswered: set[_Unanswered] = set()
        self._watchdog: asyncio.TimerHandle | None = None
        """The one timer that resends what goes unanswered (armed while something waits)."""
        self._next_send = 0.0
        self._paused_until = 0.0

    def waiting(self) -> list[asyncio.Future[Any]]:
        """The answers still awaited: of the requests sent, and of the action in flight."""
        futures = [r.future for r in self._requests.values() if not r.future.done()]
        action = self._action
        if action is not None and not action.future.done():
            futures.append(action.future)
        return futures

    def next_req(self) -> int:
        """A new request id (the owner's rejoin on a new connection takes one too)."""
        return next(self._req_ids)

    # -- waiting for answers ----------------------------------------------------------------

    async def act(self, make: Callable[[], ActionMessage]) -> p.Ack:
        """Send the action ``make()`` builds (called once the action before it is answered,
        so it can take the next ``seq``) and return its ack; raises the error it is
        answered with, or :attr:`lost`. One action is in flight at a time; it is sent
        again until answered (no bound)."""
        async with self._action_lock:
            if self.lost is not None:
                raise self.lost
            action = _Action(make(), asyncio.get_running_loop().create_future())
            self._action = action
            try:
                ack: p.Ack = await self._until_answered(action.message, action.future, None)
                return ack
            finally:
                if self._action is action:
                    self._action = None

    async def request(
        self, make: Callable[[int], Any], *, repeatable: bool, timeout: float | None
    ) -> Any:
        """Send the request ``make(req)`` builds with a new id and return its reply; raises
        the error it is answered with, :attr:`lost`, or TimeoutError after ``timeout``
        seconds. A ``repeatable`` request is sent again while unanswered; one that is not
        is sent once and fails with :class:`RequestInterrupted` when the connection drops
        (:meth:`interrupt`)."""
        if self.lost is not None:
            raise self.lost
        req = self.next_req()
        request = _Request(make(req), asyncio.get_running_loop().create_future(), repeatable)
        self._requests[req] = request
        try:
            async with asyncio.timeout(timeout):
                return await self._until_answered(
                    request.message, request.future, None if repeatable else 0
                )
        finally:
            self._requests.pop(req, None)

    async def _until_answered(
        self, message: object, future: asyncio.Future[Any], resends: int | None
    ) -> Any:
        """Send ``message`` and wait for ``future``; while no answer comes, send it again
        every ``resend_after`` seconds (at most ``resends`` times; None: no bound) — the
        server answers a repeated action or join as it did the first. One timer looks
        after everything unanswered (:meth:`_resend_due`)."""
        await self._send(message)
        loop = asyncio.get_running_loop()
        item = _Unanswered(message, future, resends, loop.time() + self.resend_after)
        self._unanswered.add(item)
        if self._watchdog is None:
            self._watchdog = loop.call_at(item.due, self._resend_due)
        try:
            return await future
        finally:
            self._unanswered.discard(item)

    def _resend_due(self) -> None:
        """Send again what has waited ``resend_after`` seconds for an answer (one resend at
        a time each, none once answered), then wait for the next one due."""
        self._watchdog = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        upcoming: float | None = None
        for item in list(self._unanswered):
            if item.future.done() or item.sending:
                continue
            if item.due <= now:
                if item.resends is None or item.sent < item.resends:
                    item.sending = True
                    self._spawn(self._send_again(item))
                    continue  # due again once this resend is out
                item.due = now + self.resend_after
            upcoming = item.due if upcoming is None else min(upcoming, item.due)
        if upcoming is not None:
            self._watchdog = loop.call_at(upcoming, self._resend_due)

    async def _send_again(self, item: _Unanswered) -> None:
        try:
            if not item.future.done():
                item.sent += 1
                log.info("no answer to %s yet: sending it again", type(item.message).__name__)
                await self._send(item.message, unless=item.future)
        finally:
            item.sending = False
            loop = asyncio.get_running_loop()
            item.due = loop.time() + self.resend_after
            if not item.future.done() and self._watchdog is None and not self.closing:
                self._watchdog = loop.call_at(item.due, self._resend_due)

    # -- sending ----------------------------------------------------------------------------

    async def _send(self, message: object, *, unless: asyncio.Future[Any] | None = None) -> None:
        """Send now if connected (keeping ``send_interval`` between frames); when not, the
        reconnect sends what still waits. Nothing is sent once ``unless`` is done (the
        answer came while this waited its turn)."""
        loop = asyncio.get_running_loop()
        ws = self._connection()
        if (
            ws is not None
            and not self._send_lock.locked()
            and max(self._next_send, self._paused_until) <= loop.time()
            and (unless is None or not unless.done())
            and write_now(ws, p.encode(message))
        ):
            # nothing to wait for (the usual case): written at once, in this turn
            if self.send_interval:
                self._next_send = loop.time() + self.send_interval
            return
        async with self._send_lock:
            wait = max(self._next_send, self._paused_until) - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if unless is not None and unless.done():
                return
            ws = self._connection()
            if ws is None:
                return
            with contextlib.suppress(ConnectionClosed):
                await ws.send(p.encode(message))
            self._next_send = loop.time() + self.send_interval

    def _rate_limited(self) -> None:
        """The server refused a frame for rate (and drops the next ones for a while):
        slow down, pause, then send again whatever waits for an answer."""
        self.send_interval = min(max(self.send_interval * 2, 0.02), 1.0)
        loop = asyncio.get_running_loop()
        self._paused_until = loop.time() + self.rate_limit_pause
        log.info("rate limited: pausing, then one frame every %.2fs", self.send_interval)

        async def resend() -> None:
            for request in list(self._requests.values()):
                if request.repeatable and not request.future.done():
                    await self._send(request.message)
            action = self._action
            if action is not None and not action.future.done():
                await self._send(action.message)

        self._spawn(resend())

    async def resend_all(self, ws: ClientConnection) -> list[int]:
        """Send every request still waiting, then the action in flight, on the new
        connection ``ws``; returns the ``seq`` of the action sent again (if any). Raises
        what ``ws.send`` raises."""
        for request in list(self._requests.values()):
            await ws.send(p.encode(request.message))
        resent: list[int] = []
        if self._action is not None and not self._action.future.done():
            resent.append(self._action.seq)
            await ws.send(p.encode(self._action.message))
        return resent

    # -- answers ----------------------------------------------------------------------------

    def resolve(self, req: int, reply: Any) -> None:
        """The reply to request ``req`` came (nothing happens for an unknown id)."""
        request = self._requests.pop(req, None)
        if request is not None and not request.future.done():
            request.future.set_result(reply)

    def take_ack(self, ack: p.Ack) -> None:
        """An ack came: it answers the action in flight when it has its ``seq`` and move.
        With its ``seq`` but another move, another action of the same player holds that
        ``seq``; the one in flight is then sent again as the next ``seq``."""
        action = self._action
        if action is not None and ack.seq == action.seq and not action.future.done():
            if ack.move == _action_text(action.message):
                self._action = None
                action.future.set_result(ack)
            else:
                # another action of ours holds this seq (a copy applied after the client
                # had been told it failed): this one is still to do, as the next
                action.message = dataclasses.replace(action.message, seq=ack.seq + 1)
                self._spawn(self._send(action.message))

    def take_error(self, error: p.Error) -> bool:
        """An error came: raised to the request (by ``req``) or the action (by ``seq``) it
        answers; True when it answered one. A ``rate_limited`` for no request nor action
        slows sending down and sends again what waits (and answers nothing)."""
        if error.req is not None and error.req in self._requests:
            request = self._requests.pop(error.req)
            if not request.future.done():
                request.future.set_exception(error_from_message(error))
            return True
        if error.error == "rate_limited" and error.seq is None and error.req is None:
            self._rate_limited()
        action = self._action
        if error.seq is not None and action is not None and error.seq == action.seq:
            self._action = None
            if not action.future.done():
                action.future.set_exception(error_from_message(error))
            return True
        return False

    def interrupt(self) -> None:
        """The connection dropped: the requests that may not be repeated fail with
        :class:`RequestInterrupted` (the others wait for the reconnect)."""
        for req, request in list(self._requests.items()):
            if not request.repeatable:
                self._requests.pop(req)
                if not request.future.done():
                    request.future.set_exception(
                        RequestInterrupted("the connection dropped during the request")
                    )

    def give_up(self, error: SpiderClientError) -> None:
        """Everything waiting fails with ``error``, and so does everything asked for later."""
        self.lost = error
        for request in self._requests.values():
            if not request.future.done():
                request.future.set_exception(error)
        self._requests.clear()
        if self._action is not None and not self._action.future.done():
            self._action.future.set_exception(error)
        self._action = None

    def stop(self) -> None:
        """Cancel the sends under way and the resend timer (the owner is closing)."""
        for task in list(self._tasks):
            task.cancel()
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
