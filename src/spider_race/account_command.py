"""``spider-race account``: an account on a server, from the terminal.

``register NAME`` makes the account and signs in, ``login NAME`` signs in, ``logout``
signs out (``--everywhere``: every session of the account), ``whoami`` says who you are,
``sessions`` lists the account's sessions, ``password`` changes the password (and ends
every other session), ``upgrade-to-bot`` makes the account a bot account (for good),
``token create|list|revoke`` handles its personal API tokens, ``delete`` deletes it (its
races stay, under "deleted player"). The password is asked for without echo (twice for a new one), or read
from standard input with ``--password-stdin``: one line per password (``password`` reads
two: the old, then the new).

The session token is kept in the credentials file (:mod:`.credentials`) for ``--url``, in
place of a guest's token; ``play``, ``bot`` and ``watch`` then speak for the account. A
guest's token stored there is sent along with ``register`` and ``login``
(``X-Guest-Token``), so that the account takes the guest over where the server does so.
:data:`~.credentials.TOKEN_ENV` overrides the file: with it set, the commands act for its
session.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import sys
import time
from importlib import metadata
from typing import Any, TextIO

from .account_http import REFUSED, AccountFailure, AccountServer
from .credentials import DEFAULT_URL, TOKEN_ENV, Credentials, token_from_environment

__all__ = ["EPILOG", "add_account_parser", "run_account"]

USAGE_ERROR = 2
"""Exit status: a bad URL, passwords that differ, no password given."""

EPILOG = f"""\
exit status: 0 done; 1 the server refused (the name refused or taken, a weak password,
a wrong name or password, not signed in, too many attempts: the reason and the wait on
standard error); 2 bad input (a URL that is no server's, the two passwords differ, no
password); 3 the server does not answer or cannot do it now.
The session is kept in the credentials file, per server; {TOKEN_ENV} in the environment
overrides it for every command."""


def add_account_parser(sub: Any, *, url_help: str, credentials_help: str) -> None:
    """Add ``account`` and its commands to the subparsers ``sub``."""
    formatter = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser(
        "account",
        help=(
            "an account: register, login, logout, whoami, sessions, password, upgrade-to-bot,"
            " token, delete"
        ),
        description=__doc__.split("\n\n")[1].replace("``", ""),
        epilog=EPILOG,
        formatter_class=formatter,
    )
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(name: str, text: str, *, named: bool = False, stdin: str = "") -> Any:
        a = actions.add_parser(name, help=text, description=text, epilog=EPILOG)
        a.formatter_class = formatter
        if named:
            a.add_argument("name", help="the account's name")
        if stdin:
            a.add_argument("--password-stdin", action="store_true", help=stdin)
        a.add_argument("--url", default=DEFAULT_URL, help=url_help)
        a.add_argument("--credentials", default=None, metavar="FILE", help=credentials_help)
        return a

    one = "read the password from standard input (one line) instead of asking"
    action(
        "register",
        "make an account (names: up to 24 letters, digits, spaces and - _ .; passwords: 8 "
        "characters or more, not a common one) and sign in",
        named=True,
        stdin=one,
    )
    action("login", "sign in to an account and keep its session", named=True, stdin=one)
    a = action("logout", "sign out: end the kept session and forget it")
    a.add_argument("--everywhere", action="store_true", help="end every session of the account")
    action("whoami", "the account the kept session speaks for")
    action("sessions", "the account's sessions: when made, last used, from where")
    action(
        "password",
        "change the password (asked for: the old, then the new twice); every other session ends",
        stdin="read the old and the new password from standard input, one line each",
    )
    a = action(
        "upgrade-to-bot",
        "make the account a bot account, for good: it then races only as a bot, on the bots'"
        " ladder (refused to an account with rated races as a human)",
    )
    a.add_argument("--yes", action="store_true", help="do not ask to confirm")
    action(
        "delete",
        "delete the account (its password asked for): its sessions and tokens end at once;"
        " its races stay, shown as 'deleted player'",
        stdin=one,
    )
    t = actions.add_parser(
        "token",
        help="personal API tokens: create, list, revoke",
        description="personal API tokens, for programs (SPIDER_RACE_TOKEN): create, list, revoke",
        epilog=EPILOG,
        formatter_class=formatter,
    )
    kinds = t.add_subparsers(dest="token_action", required=True, metavar="TOKEN_ACTION")

    def token_action(name: str, text: str) -> Any:
        a = kinds.add_parser(name, help=text, description=text, epilog=EPILOG)
        a.formatter_class = formatter
        a.add_argument("--url", default=DEFAULT_URL, help=url_help)
        a.add_argument("--credentials", default=None, metavar="FILE", help=credentials_help)
        return a

    a = token_action("create", "a new API token, shown once (keep it where only you read it)")
    a.add_argument(
        "--scope",
        action="append",
        required=True,
        metavar="SCOPE",
        help="race:read, race:play, race:create or bot:play (bot accounts); repeat for more",
    )
    a.add_argument("--name", default=None, help="what to call it (up to 40 ASCII characters)")
    token_action("list", "the account's API tokens: id, name, scopes, made, last used")
    a = token_action("revoke", "revoke an API token by its id (see token list)")
    a.add_argument("id", type=int, help="the token's id")


def run_account(
    args: argparse.Namespace,
    *,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run ``spider-race account ACTION``; the exit status."""
    command = _Command(args, stdin or sys.stdin, out or sys.stdout, err or sys.stderr)
    try:
        command.server = AccountServer(args.url, agent=_agent())
        return command.run()
    except AccountFailure as e:
        return command.fail(str(e), e.status)
    except (EOFError, KeyboardInterrupt):
        return command.fail("no password given", USAGE_ERROR)
    except ValueError as e:
        return command.fail(str(e), USAGE_ERROR)
    except OSError as e:
        return command.fail(f"the credentials file: {e}", USAGE_ERROR)


class _Command:
    def __init__(self, args: argparse.Namespace, stdin: TextIO, out: TextIO, err: TextIO) -> None:
        self.args = args
        self.stdin = stdin
        self.out = out
        self.err = err
        self.credentials = Credentials(args.credentials)
        self.server: AccountServer

    def fail(self, message: str, status: int) -> int:
        what = self.args.action
        if what == "token":
            what += " " + self.args.token_action
        print(f"spider-race account {what}: {message}", file=self.err)
        return status

    def run(self) -> int:
        act = getattr(self, "do_" + self.args.action.replace("-", "_"))
        return int(act())

    # -- passwords ----------------------------------------------------------------------

    def _read(self, prompt: str, *, twice: bool = False) -> str:
        """A password: the next line of standard input with ``--password-stdin``, else
        asked for without echo (``twice``: asked again, and the two must agree)."""
        if self.args.password_stdin:
            line = self.stdin.readline()
            if not line:
                raise EOFError
            password = line.removesuffix("\n").removesuffix("\r")
        else:
            password = getpass.getpass(prompt)
            if twice and getpass.getpass("again: ") != password:
                raise ValueError("the two passwords differ: nothing was changed")
        if not password:
            raise ValueError("no password given")
        return password

    # -- the session kept ---------------------------------------------------------------

    def _session(self) -> str:
        """The session token the command acts for: the environment's, else the file's."""
        token = token_from_environment()
        if token is None:
            stored = self.credentials.get(self.args.url)
            if stored is not None and stored.account:
                token = stored.token
        if token is None:
            raise AccountFailure(
                f"not signed in at {self.args.url}: spider-race account login NAME",
                status=REFUSED,
                code="unauthorized",
            )
        return token

    def _guest(self) -> str | None:
        """The guest token stored for the server (the account takes it over), if any."""
        token = token_from_environment()
        if token is None:
            stored = self.credentials.get(self.args.url)
            token = stored.token if stored is not None else None
        return token if token is not None and not token.startswith(("s1.", "a1.")) else None

    def _keep(self, signed: dict[str, Any], what: str) -> int:
        """Store the new session in place of what the file held, ending a session it
        replaces (best effort)."""
        before = self.credentials.get(self.args.url)
        self.credentials.put(
            self.args.url, token=signed["token"], player=signed["player"], name=signed["name"]
        )
        if before is not None and before.account and before.token != signed["token"]:
            # ended already, or the server is away: then it ends with its lifetime
            with contextlib.suppress(AccountFailure):
                self.server.sign_out(before.token)
        print(f"{what} as {signed['name']} at {self.args.url}", file=self.out)
        if token_from_environment() is not None:
            print(
                f"note: {TOKEN_ENV} is set, and the commands speak with its token until "
                "it is unset",
                file=self.err,
            )
        return 0

    # -- the actions --------------------------------------------------------------------

    def do_register(self) -> int:
        password = self._read("password: ", twice=True)
        guest = self._guest()
        try:
            signed = self.server.sign_up(self.args.name, password, guest=guest)
        except AccountFailure as e:
            if guest is None or not _about_the_guest(e):
                raise
            print(f"note: your guest player stays a guest ({e})", file=self.err)
            signed = self.server.sign_up(self.args.name, password)
        before = self.credentials.get(self.args.url)
        if guest is not None and before is not None and before.player == signed["player"]:
            print("your guest player's races and ratings are the account's now", file=self.out)
        return self._keep(signed, "signed up and signed in")

    def do_login(self) -> int:
        password = self._read("password: ")
        signed = self.server.sign_in(self.args.name, password, guest=self._guest())
        return self._keep(signed, "signed in")

    def do_logout(self) -> int:
        token = self._session()
        stored = self.credentials.get(self.args.url)
        try:
            ended = self.server.sign_out(token, everywhere=self.args.everywhere)
        except AccountFailure as e:
            if e.code != "unauthorized":
                raise
            ended = -1
        if stored is not None and stored.token == token:
            self.credentials.drop(self.args.url)
        if ended < 0:
            print(f"signed out at {self.args.url} (the session had ended already)", file=self.out)
        elif self.args.everywhere:
            print(
                f"signed out everywhere at {self.args.url}: {ended} "
                f"session{'s' if ended != 1 else ''} ended",
                file=self.out,
            )
        else:
            print(f"signed out at {self.args.url}", file=self.out)
        return 0

    def do_whoami(self) -> int:
        me = self.server.me(self._session())
        since = _day(me.get("created_at"))
        kind = ", a bot account" if me.get("bot") else ""
        print(
            f"{me['name']} (player {me['player']}, account since {since}) at {self.args.url}{kind}",
            file=self.out,
        )
        return 0

    def do_sessions(self) -> int:
        listed = self.server.sessions(self._session())
        print("id            made              last used         address          device",
              file=self.out)  # fmt: skip
        for s in listed:
            mark = "  (this one)" if s.get("current") else ""
            print(
                f"{s['id']:<12}  {_when(s.get('created_at'))}  {_when(s.get('last_used_at'))}"
                f"  {str(s.get('address') or '-')[:15]:<15}  "
                f"{str(s.get('user_agent') or '-')[:40]}{mark}",
                file=self.out,
            )
        return 0

    def do_password(self) -> int:
        token = self._session()
        name = self.server.me(token)["name"]
        old = self._read("old password: ")
        new = self._read("new password: ", twice=True)
        ended = self.server.change_password(name, old, new, keep=token)
        print(
            f"the password of {name} is changed: {ended} other "
            f"session{'s' if ended != 1 else ''} ended",
            file=self.out,
        )
        return 0

    def do_upgrade_to_bot(self) -> int:
        token = self._session()
        me = self.server.me(token)
        if me.get("bot"):
            print(f"{me['name']} is a bot account already", file=self.out)
            return 0
        if not self.args.yes:
            print(
                f"warning: {me['name']} becomes a bot account for good: it races only as a"
                " bot, on the bots' ladder, and never becomes a human's account again.",
                file=self.err,
            )
            print(f"type the account's name ({me['name']}) to go on: ", end="", file=self.err)
            self.err.flush()
            if self.stdin.readline().strip() != me["name"]:
                raise ValueError("not confirmed: nothing was changed")
        done = self.server.upgrade_to_bot(token)
        print(f"{done['name']} is a bot account now", file=self.out)
        return 0

    def do_delete(self) -> int:
        token = self._session()
        name = self.server.me(token)["name"]
        password = self._read(f"password of {name} (to delete the account): ")
        self.server.delete(name, password)
        stored = self.credentials.get(self.args.url)
        if stored is not None and stored.token == token:
            self.credentials.drop(self.args.url)
        print(
            f"the account {name} is deleted at {self.args.url}; its races show 'deleted player'",
            file=self.out,
        )
        return 0

    def do_token(self) -> int:
        token = self._session()
        act = self.args.token_action
        if act == "create":
            made = self.server.create_token(token, self.args.scope, name=self.args.name)
            print(made["token"], file=self.out)
            print(
                f"token {made['id']} ({made['name']}: {' '.join(made['scopes'])}) made; it is"
                f" shown this once: pass it to programs as {TOKEN_ENV}",
                file=self.err,
            )
            return 0
        if act == "revoke":
            self.server.revoke_token(token, self.args.id)
            print(f"token {self.args.id} revoked", file=self.out)
            return 0
        listed = self.server.tokens(token)
        print("id      name                  scopes                        made              last used",
              file=self.out)  # fmt: skip
        for t in listed:
            print(
                f"{t['id']:<6}  {str(t['name'])[:20]:<20}  {' '.join(t['scopes'])[:28]:<28}"
                f"  {_when(t.get('created_at'))}  {_when(t.get('last_used_at'))}",
                file=self.out,
            )
        return 0


def _about_the_guest(e: AccountFailure) -> bool:
    """Whether a sign-up was refused for the guest token sent with it (taken over by an
    account already, or one the server does not take): then it is made without it."""
    return e.code == "guest_taken" or (e.code == "bad_request" and "X-Guest-Token" in str(e))


def _agent() -> str:
    """The ``User-Agent`` the sessions are listed with."""
    try:
        number = metadata.version("spider-race")
    except metadata.PackageNotFoundError:
        number = "unknown"
    return f"spider-race/{number} (command line)"


def _when(at: Any) -> str:
    if not isinstance(at, (int, float)):
        return "-".ljust(16)
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(at))


def _day(at: Any) -> str:
    return _when(at)[:10] if isinstance(at, (int, float)) else "-"
