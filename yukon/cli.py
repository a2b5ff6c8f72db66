"""The ``yukon`` command line.

Every user mistake (a bad code, a garbage move) ends in one clear line on stderr and a
non-zero exit status, never a traceback: exit 1 for an illegal move, 2 for bad input.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from client.board_text import Style, render_board
from protocol import Game, IllegalMoveError, InvalidMoveError, Rules, YukonError
from protocol.messages import NODE_ID_CHARS

if TYPE_CHECKING:
    from server.app import ServeOptions

__all__ = ["main"]

EXIT_ILLEGAL = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line too."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


class _Defaults(argparse.HelpFormatter):
    """Help that ends each option with its default, as the environment makes it, so that
    ``serve --help`` shows what the server will do; never the value of a secret."""

    SECRET = frozenset({"password", "daily_secret"})

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            "%(default)" in text
            or "default" in text
            or default in (None, False, argparse.SUPPRESS)
            or action.dest in self.SECRET
            or not action.option_strings
        ):
            return text
        return f"{text} (default: %(default)s)"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("yukon-race")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _move_text(text: str) -> str:
    """``AD-5`` as ``AD>5``: a spelling that needs no quotes in a shell, where ``>``
    redirects; only the command line reads it (the wire and the engine keep ``>``)."""
    card, dash, dest = text.strip().rpartition("-")
    return f"{card}>{dest}" if dash and card and ">" not in text else text


def _style(args: argparse.Namespace, out: TextIO) -> Style:
    if args.color == "auto":
        color = out.isatty() and "NO_COLOR" not in os.environ
    else:
        color = args.color == "always"
    return Style(ascii=args.ascii, color=color)


def _game_from(text: str) -> Game:
    """A game code, or (when it has spaces) a position in notation."""
    if " " in text.strip():
        return Game.from_position(text)
    return Game.from_code(text)


def _state(game: Game) -> str:
    if game.is_won():
        return "won"
    if game.is_stuck():
        return "stuck"
    return "playing"


def cmd_deal(args: argparse.Namespace) -> int:
    game = _game_from(args.code)
    out = sys.stdout
    if game.code is not None:
        print(f"{game.code}  ({game.rules.describe()})", file=out)
    print(render_board(game, _style(args, out)), file=out)
    print(file=out)
    print(game.position(), file=out)
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    game = _game_from(args.code)
    moves: list[str] = list(args.moves)
    if not moves and not sys.stdin.isatty():
        moves = [line.strip() for line in sys.stdin if line.strip() and not line.startswith("#")]
    out = sys.stdout
    for number, move in enumerate(moves, start=1):
        try:
            game.play(_move_text(move))
        except InvalidMoveError as exc:
            print(f"yukon replay: move {number}: {exc}", file=sys.stderr)
            return EXIT_USAGE
        except IllegalMoveError as exc:
            print(f"yukon replay: move {number} ({move}) is illegal: {exc.reason}", file=sys.stderr)
            return EXIT_ILLEGAL
    print(render_board(game, _style(args, out)), file=out)
    print(file=out)
    print(game.position(), file=out)
    print(f"score {game.score}  moves {game.move_count}  state {_state(game)}", file=out)
    return 0


class _UsageError(Exception):
    """A bad ``yukon serve`` setting; the message is the one line the user sees."""


def _secret(args: argparse.Namespace, name: str) -> str | None:
    """A secret setting given directly (flag or ``YUKON_<NAME>``) or read from a file
    (``--<name>-file`` or ``YUKON_<NAME>_FILE``).

    Why a file: a flag's value is in the process's command line, which every local user
    can read (``ps``, ``/proc/PID/cmdline``); a file readable by the server's user only,
    or the environment (readable only by that user and root), keeps it private. A file's
    one trailing line break (as editors and ``echo`` leave) is not part of the secret.
    """
    flag = name.replace("_", "-")
    direct: str | None = getattr(args, name)
    path: str | None = getattr(args, f"{name}_file")
    if direct is not None and path is not None:
        raise _UsageError(f"--{flag} and --{flag}-file (or their variables) exclude each other")
    if path is None:
        return direct
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise _UsageError(f"--{flag}-file: cannot read {path}: {reason}") from None
    if text.endswith("\n"):
        text = text[:-1]
        if text.endswith("\r"):
            text = text[:-1]
    if not text:
        raise _UsageError(f"--{flag}-file: {path} is empty")
    return text


#: The database URLs the server can use: SQLite and PostgreSQL, plain or with the async
#: driver it picks anyway (``server.storage.base.normalize_url``).
_DB_SCHEMES = ("sqlite", "sqlite+aiosqlite", "postgresql", "postgres", "postgresql+asyncpg")


def _check_db(url: str, flag: str = "--db") -> str:
    """``--db`` checked before anything opens it: a URL of another database (``mysql://``)
    or no URL at all (``nonsense``) is one line saying what would do, where SQLAlchemy
    would end in a traceback about a missing driver or an unparsable string."""
    scheme, sep, rest = url.partition("://")
    if not sep and url.startswith("sqlite:"):  # ``sqlite:`` alone is SQLite in memory
        return url
    missing = not rest and not scheme.startswith("sqlite")  # postgresql:// names no database
    if not sep or scheme.lower() not in _DB_SCHEMES or missing:
        raise _UsageError(
            f"{flag}: {url!r} is not a database URL this server can use: give"
            " sqlite:///PATH (SQLite in a file) or postgresql://USER[:PASSWORD]@HOST[:PORT]/DB"
        )
    return url


def serve_options(args: argparse.Namespace) -> ServeOptions:
    """The server's settings from ``yukon serve``'s arguments; _UsageError if one is bad."""
    from server.app import ServeOptions
    from server.rooms import HubConfig

    _check_db(args.db)

    try:
        Rules.parse(args.daily_rules)
    except YukonError as exc:
        raise _UsageError(f"--daily-rules: {exc}") from None
    password = _secret(args, "password")
    daily_secret = _secret(args, "daily_secret")
    if password is not None and not 0 < len(password) <= 128:
        raise _UsageError("--password must be 1 to 128 characters")
    if (args.certfile is None) != (args.keyfile is None):
        raise _UsageError("--certfile and --keyfile go together")
    from server.runtime.limits import parse_networks

    try:
        given = args.trusted_proxy if args.trusted_proxy is not None else [args.trusted_proxies]
        proxies = tuple(net for text in given if text for net in parse_networks(text))
    except ValueError as exc:
        raise _UsageError(f"--trusted-proxy: {exc}") from None
    from server.rooms.pool import PoolConfig

    try:  # issue 29: the quick-race pool's settings
        PoolConfig(
            args.quick_min, args.quick_max, args.quick_wait, min(args.quick_fill, args.quick_wait)
        )
    except ValueError as exc:
        raise _UsageError(f"--quick-min/--quick-max/--quick-wait/--quick-fill: {exc}") from None
    from yukon.fairplay import fairplay_from

    try:  # issue 40: the fair-play thresholds and the automatic hide
        fairplay = fairplay_from(args)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    return ServeOptions(
        host=args.host,
        port=args.port,
        db=args.db,
        spool=Path(args.spool),
        daily_secret=daily_secret,
        daily_rules=args.daily_rules,
        solver_processes=args.solver_processes,
        certfile=Path(args.certfile) if args.certfile else None,
        keyfile=Path(args.keyfile) if args.keyfile else None,
        trusted_proxies=proxies,
        redis=args.redis or None,
        redis_prefix=args.redis_prefix,
        node=_node_id(args.node_id),
        fairplay=fairplay,
        hub=HubConfig(
            resume_window_s=args.resume_window,
            password=password or None,
            max_rooms=args.max_rooms,
            max_connections=args.max_connections,
            bucket_rate=args.msg_rate,
            bucket_capacity=args.msg_burst,
            max_connections_per_address=args.max_connections_per_address,
            max_registrations_per_address=args.max_registrations_per_address,
            max_rooms_per_address=args.max_rooms_per_address,
            max_opens_per_address=args.max_opens_per_address,
            max_room_misses_per_address=args.max_room_misses_per_address,
            max_attempts_per_player=args.max_attempts_per_player,
            max_attempts_per_address=args.max_attempts_per_address,
            daily_min_age_s=args.daily_min_age * 3600,
            quick_min_players=args.quick_min,
            quick_max_players=args.quick_max,
            quick_max_wait_s=args.quick_wait,
            quick_fill_s=args.quick_fill,
        ),
    )


def _node_id(text: str | None) -> str | None:
    """``--node-id``, checked: it goes into URLs (``?node=``) and the load balancer's
    backend names as it is (docs/protocol.md 4.25)."""
    if not text:
        return None
    if len(text) > 64 or not NODE_ID_CHARS.issuperset(text):
        raise _UsageError(f"--node-id: {text!r} is not a node id: at most 64 of A-Z a-z 0-9 . _ -")
    return text


def cmd_serve(args: argparse.Namespace) -> int:
    from server.app import run

    try:
        options = serve_options(args)
    except _UsageError as exc:
        print(f"yukon serve: {exc}", file=sys.stderr)
        return EXIT_USAGE
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()),
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
    )
    if args.log_level != "debug":  # one line per notable event: ours, not the library's
        logging.getLogger("websockets").setLevel(logging.WARNING)
        logging.getLogger("alembic").setLevel(logging.WARNING)
    return run(options)


def cmd_db(args: argparse.Namespace) -> int:
    import asyncio

    from server.app import shown_url
    from server.storage import migrate
    from server.storage.sql import SqlStore, describe_error

    identical = True
    try:
        _check_db(args.db)
    except _UsageError as exc:
        print(f"yukon db {args.action}: {exc}", file=sys.stderr)
        return EXIT_USAGE

    async def work() -> str:
        nonlocal identical
        store = SqlStore(args.db)
        try:
            if args.action == "recompute-ratings":
                report = await store.recompute_ratings()
                identical = report.identical
                lines = [*report.differences[:20]]
                if len(report.differences) > 20:
                    lines.append(f"... and {len(report.differences) - 20} more")
                verdict = (
                    "identical"
                    if identical
                    else f"{len(report.differences)} difference(s) from the stored numbers"
                )
                refunds = f", {report.refunds} refund(s) replayed" if report.refunds else ""
                lines.append(
                    f"{shown_url(store.url)}: {report.races} rated race(s), {report.rows}"
                    f" rating(s) of {report.players} player(s) recomputed{refunds}: {verdict}"
                )
                return "\n".join(lines)
            if args.action == "upgrade":
                before, after = await migrate.upgrade_from(store)
                if before == after:
                    return f"{shown_url(store.url)}: already at {after} (head)"
                return f"{shown_url(store.url)}: upgraded from {before or 'empty'} to {after}"
            now = await migrate.current(store)
            state = "head" if now == migrate.head() else f"head is {migrate.head()}"
            return f"{shown_url(store.url)}: at {now or 'empty (no tables)'} ({state})"
        finally:
            await store.close()

    try:
        print(asyncio.run(work()))
    except Exception as exc:
        print(f"yukon db {args.action}: {describe_error(exc)}", file=sys.stderr)
        return 1
    return 0 if identical else 2


def _env(name: str, default: str | None = None) -> str | None:
    """The value of ``YUKON_<name>``, for settings that a deployment gives by environment."""
    return os.environ.get(f"YUKON_{name}", default)


def _positive(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    return value


def _hours(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text} is not a number of hours") from None
    if not 0 <= value <= 24 * 366:
        raise argparse.ArgumentTypeError(f"{text} is not a number of hours from 0 to 8784")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is below 0")
    return value


def cmd_play(args: argparse.Namespace) -> int:
    import asyncio

    from client.app import YukonApp
    from client.config import LOCAL_KEY, TokenStore, data_dir, local_db_url
    from client.invite import LinkError, parse_target
    from protocol.messages import normalize_name

    if args.name is not None:
        try:
            normalize_name(args.name)
        except ValueError as exc:
            print(f"yukon play: --name: {exc}", file=sys.stderr)
            return EXIT_USAGE
    try:
        target = parse_target(args.url)  # a server, or a room's invite link
    except LinkError as exc:
        print(f"yukon play: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if target.token is not None and args.name is not None:
        print(
            "yukon play: a name's link (#token=) says who you are; --name names another"
            " (drop one of them)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.local and (target.room is not None or target.token is not None):
        print(
            f"yukon play: --local starts a server of your own; {args.url.strip()} is a room"
            " on another server (drop one of them)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    store = TokenStore()
    where = data_dir()
    # Logs go to a file in the data directory: nothing may write over the game's screen.
    handler: logging.Handler
    try:
        where.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(where / ("local.log" if args.local else "client.log"))
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    logging.getLogger("websockets").setLevel(logging.WARNING)
    cafile = Path(args.cafile) if args.cafile else None
    if cafile is not None and not cafile.is_file():
        print(f"yukon play: --cafile: {args.cafile} is not a file", file=sys.stderr)
        return EXIT_USAGE
    if not args.local:
        app = YukonApp(
            target.url,
            name=args.name,
            password=args.password,
            ascii=args.ascii,
            store=store,
            cafile=cafile,
            invite=target.room,
            invite_key=target.key,
            token=target.token,
        )
        app.session.quick = args.quick  # issue 29: into the quick-race pool once welcomed
        app.run()
        return app.return_code or 0  # 1: a certificate not trusted, or refused

    from server.app import ServeOptions, StartupError, open_server

    async def local() -> None:
        options = ServeOptions(
            host="127.0.0.1", port=0, db=local_db_url(where), spool=where / "local-spool.jsonl"
        )
        async with open_server(options) as server:
            app = YukonApp(
                f"ws://127.0.0.1:{server.port}",
                name=args.name,
                ascii=args.ascii,
                store=store,
                key=LOCAL_KEY,
            )
            app.session.quick = args.quick
            await app.run_async()

    try:
        asyncio.run(local())
    except StartupError as exc:
        print(f"yukon play --local: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"yukon play --local: cannot start the local server: {exc}", file=sys.stderr)
        return 1
    return 0


def _port(text: str) -> int:
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0-65535)")
    return port


def cmd_solve(args: argparse.Namespace) -> int:
    import time

    from solver import search_implementation, solve

    game = _game_from(args.code)
    result = solve(game, budget_seconds=args.budget, clock=time.perf_counter)
    print(
        f"{result.verdict}  {result.seconds:.3f} s  {result.nodes} nodes"
        + (f"  {len(result.moves)} moves" if result.moves else "")
        + f"  ({search_implementation()} search)"
    )
    if result.moves:
        print(" ".join(result.moves))
    return 0


def _add_style_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ascii", action="store_true", help="letters S H D C instead of suit glyphs")
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour red suits (default: auto, when writing to a terminal and NO_COLOR is unset)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="yukon", description="Yukon Race: race friends at Yukon Solitaire.")
    parser.add_argument("--version", action="version", version=f"yukon {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("deal", help="show a deal as a board and in position notation")
    p.add_argument("code", help="a game code such as YU1-C-AAAAAAB (or a position)")
    _add_style_options(p)
    p.set_defaults(func=cmd_deal)

    p = sub.add_parser(
        "replay",
        help="play moves on a deal and show the result",
        description="Play MOVEs (or one per line on stdin) from the deal of CODE."
        " Exit 1 on an illegal move, 2 on a bad code or a text that is not a move."
        " Quote moves written with '>', which a shell reads as a redirection:"
        " yukon replay YU1-C-AAAAAAB '6H>7' 'AH>F', or write them with a dash: 6H-7 AH-F.",
    )
    p.add_argument("code", help="a game code such as YU1-C-AAAAAAB (or a position)")
    p.add_argument(
        "moves",
        nargs="*",
        default=[],  # optional: without it argparse names MOVE as required too
        metavar="MOVE",
        help="moves such as '7S>4' or 'AH>F' (quoted), or 7S-4 or AH-F",
    )
    _add_style_options(p)
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser(
        "solve",
        help="decide whether a deal can be won, and show a winning line",
        description="Search every card of CODE (or a position) for a win: prints won with"
        " the winning line, lost (proven), or unknown when the budget runs out.",
    )
    p.add_argument("code", help="a game code such as YU1-C-AAAAAAB (or a position)")
    p.add_argument(
        "--budget", type=_positive, default=10.0, metavar="SECONDS", help="time limit (10)"
    )
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser(
        "serve",
        help="run the race server",
        description="Run the race server. Every option can also be set by the environment"
        " variable named in its help; a flag wins over the environment.",
        formatter_class=_Defaults,
    )
    p.add_argument(
        "--host", default=_env("HOST", "127.0.0.1"), help="address to listen on (YUKON_HOST)"
    )
    p.add_argument(
        "--port", type=_port, default=_env("PORT", "8765"), help="port to listen on (YUKON_PORT)"
    )
    _add_db_option(p)
    p.add_argument(
        "--password",
        default=_env("PASSWORD"),
        help="make the server private: every hello must carry this password (YUKON_PASSWORD;"
        " a flag's value is visible to every local user in ps: prefer --password-file)",
    )
    p.add_argument(
        "--password-file",
        default=_env("PASSWORD_FILE"),
        metavar="PATH",
        help="read the password from this file (YUKON_PASSWORD_FILE)",
    )
    p.add_argument(
        "--certfile",
        default=_env("CERTFILE"),
        help="TLS certificate chain: serve wss:// (YUKON_CERTFILE)",
    )
    p.add_argument("--keyfile", default=_env("KEYFILE"), help="TLS private key (YUKON_KEYFILE)")
    p.add_argument(
        "--redis",
        default=_env("REDIS"),
        metavar="URL",
        help="run as one node of a cluster sharing this Redis (redis://HOST:6379/0) and the"
        " database (YUKON_REDIS; docs/cluster.md)",
    )
    p.add_argument(
        "--redis-prefix",
        default=_env("REDIS_PREFIX", "yukon:"),
        help="prefix of the cluster's keys and channels in Redis (YUKON_REDIS_PREFIX)",
    )
    p.add_argument(
        "--node-id",
        default=_env("NODE_ID"),
        help="this node's id in the cluster (YUKON_NODE_ID; default: host name and a random"
        " suffix)",
    )
    p.add_argument(
        "--daily-secret",
        default=_env("DAILY_SECRET"),
        metavar="TEXT",
        help="secret the daily deals derive from (YUKON_DAILY_SECRET;"
        " default: generated once and kept in the database; prefer --daily-secret-file)",
    )
    p.add_argument(
        "--daily-secret-file",
        default=_env("DAILY_SECRET_FILE"),
        metavar="PATH",
        help="read the daily secret from this file (YUKON_DAILY_SECRET_FILE)",
    )
    p.add_argument(
        "--daily-rules",
        default=_env("DAILY_RULES", "C"),
        metavar="RULES",
        help="rules of the daily deal, such as C or RT (YUKON_DAILY_RULES)",
    )
    p.add_argument(
        "--solver-processes",
        type=_count,
        default=_env("SOLVER_PROCESSES", "1"),
        metavar="N",
        help="worker processes for the solver, which picks each day's winnable daily deal"
        " (YUKON_SOLVER_PROCESSES; 0: a thread of the server's own process)",
    )
    p.add_argument(
        "--resume-window",
        type=_positive,
        default=_env("RESUME_WINDOW", "60"),
        metavar="SECONDS",
        help="how long a dropped player may reconnect and resume (YUKON_RESUME_WINDOW)",
    )
    p.add_argument(
        "--max-connections",
        type=int,
        default=_env("MAX_CONNECTIONS", "10000"),
        help="connections beyond this are closed with 1013 (YUKON_MAX_CONNECTIONS)",
    )
    # issue 29: the quick-race pool (docs/protocol.md 4.26)
    p.add_argument(
        "--quick-min",
        type=int,
        default=_env("QUICK_MIN", "2"),
        help="fewest players a quick race starts with (YUKON_QUICK_MIN)",
    )
    p.add_argument(
        "--quick-max",
        type=int,
        default=_env("QUICK_MAX", "4"),
        help="most players in a quick race (YUKON_QUICK_MAX)",
    )
    p.add_argument(
        "--quick-wait",
        type=float,
        default=_env("QUICK_WAIT", "20"),
        metavar="SECONDS",
        help="nobody waits longer for a quick race while another waits too (YUKON_QUICK_WAIT)",
    )
    p.add_argument(
        "--quick-fill",
        type=float,
        default=_env("QUICK_FILL", "6"),
        metavar="SECONDS",
        help="a quick race smaller than --quick-max starts once its first player waited"
        " this long (YUKON_QUICK_FILL)",
    )
    p.add_argument(
        "--daily-min-age",
        type=_hours,
        default=_env("DAILY_MIN_AGE", "0"),
        metavar="HOURS",
        help="a player registered less than this long before a daily attempt plays it as"
        " practice; 0: off (YUKON_DAILY_MIN_AGE)",
    )
    p.add_argument(
        "--max-rooms",
        type=int,
        default=_env("MAX_ROOMS", "10000"),
        help="rooms beyond this are refused with server_full (YUKON_MAX_ROOMS)",
    )
    p.add_argument(
        "--max-connections-per-address",
        type=_count,
        default=_env("MAX_CONNECTIONS_PER_ADDRESS", "64"),
        metavar="N",
        help="connections one address (an IPv6 /64) may hold; beyond, 1013"
        " (YUKON_MAX_CONNECTIONS_PER_ADDRESS)",
    )
    p.add_argument(
        "--max-registrations-per-address",
        type=_count,
        default=_env("MAX_REGISTRATIONS_PER_ADDRESS", "20"),
        metavar="N",
        help="names one address may register per hour; beyond, too_many_names"
        " (YUKON_MAX_REGISTRATIONS_PER_ADDRESS)",
    )
    p.add_argument(
        "--max-rooms-per-address",
        type=_count,
        default=_env("MAX_ROOMS_PER_ADDRESS", "16"),
        metavar="N",
        help="rooms players from one address may have open; beyond, too_many_rooms"
        " (YUKON_MAX_ROOMS_PER_ADDRESS)",
    )
    p.add_argument(
        "--max-opens-per-address",
        type=_count,
        default=_env("MAX_OPENS_PER_ADDRESS", "60"),
        metavar="N",
        help="new connections one address may open per 10 s; beyond, 1013"
        " (YUKON_MAX_OPENS_PER_ADDRESS)",
    )
    p.add_argument(
        "--max-room-misses-per-address",
        type=_count,
        default=_env("MAX_ROOM_MISSES_PER_ADDRESS", "30"),
        metavar="N",
        help="room codes naming no room one address may try per 10 minutes (join, watch,"
        " invite links); beyond, too_many_guesses (YUKON_MAX_ROOM_MISSES_PER_ADDRESS)",
    )
    p.add_argument(
        "--max-attempts-per-player",
        type=_count,
        default=_env("MAX_ATTEMPTS_PER_PLAYER", "30"),
        metavar="N",
        help="daily attempts (practice and the archive's) a player may begin per hour;"
        " beyond, too_many_attempts (YUKON_MAX_ATTEMPTS_PER_PLAYER)",
    )
    p.add_argument(
        "--max-attempts-per-address",
        type=_count,
        default=_env("MAX_ATTEMPTS_PER_ADDRESS", "120"),
        metavar="N",
        help="daily attempts players from one address may begin per hour; beyond,"
        " too_many_attempts (YUKON_MAX_ATTEMPTS_PER_ADDRESS)",
    )
    p.add_argument(
        "--trusted-proxy",
        action="append",
        metavar="NETWORK",
        help="a reverse proxy (address or network) whose X-Forwarded-For names the client's"
        " address; repeat for several (YUKON_TRUSTED_PROXIES, comma-separated)",
    )
    p.set_defaults(trusted_proxies=_env("TRUSTED_PROXIES"))  # used when no flag is given
    p.add_argument(
        "--msg-rate",
        type=_positive,
        default=_env("MSG_RATE", "20"),
        help="messages per second a connection may send, on average (YUKON_MSG_RATE)",
    )
    p.add_argument(
        "--msg-burst",
        type=_positive,
        default=_env("MSG_BURST", "40"),
        help="messages a connection may send at once before the rate applies"
        " (YUKON_MSG_BURST); a connection beyond both is closed with 1008",
    )
    from yukon.fairplay import add_fairplay_options

    add_fairplay_options(p)  # issue 40: every threshold, and --auto-hide K/H
    p.add_argument(
        "--spool",
        default=_env("SPOOL", "yukon-spool.jsonl"),
        metavar="PATH",
        help="file that keeps results while the database is away (YUKON_SPOOL)",
    )
    p.add_argument(
        "--log-level",
        default=_env("LOG_LEVEL", "info"),
        choices=("debug", "info", "warning", "error"),
        help="how much the server logs: debug adds the libraries' detail, warning and error"
        " only problems (YUKON_LOG_LEVEL)",
    )
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser(
        "play",
        help="race in the terminal",
        description="Race in the terminal: on a server, or alone with --local. Given a"
        " room's invite link, go straight to that room: join it, or watch it when its race"
        " is running or it is full.",
    )
    p.add_argument(
        "url",
        nargs="?",
        default="ws://127.0.0.1:8765",
        metavar="ADDRESS",
        help="a server, ws://HOST:PORT or wss://HOST:PORT (default ws://127.0.0.1:8765; no"
        " scheme: ws://), or its page as a browser opens it, http(s)://HOST:PORT/ (the"
        " same server), or a room's invite link, http(s)://HOST:PORT/r/ROOMCODE (the room"
        " screen shows it), or your name's link, http(s)://HOST:PORT/#token=... (the lobby's"
        " i shows it on a device that has the name): its name is kept for that server",
    )
    p.add_argument(
        "--name",
        help="your name on this server: one of yours (each keeps its token) or a new one;"
        " without it, the last name used there",
    )
    p.add_argument(
        "--password",
        default=os.environ.get("YUKON_PASSWORD") or None,
        help="the password of a private server (env YUKON_PASSWORD)",
    )
    p.add_argument("--ascii", action="store_true", help="letters S H D C instead of suit glyphs")
    p.add_argument(
        "--cafile",
        metavar="PATH",
        help="trust a wss:// server whose certificate these PEM certificates vouch for (its"
        " own, if self-signed); without it, a certificate no authority vouches for is shown"
        " once by its SHA-256 fingerprint, to trust and pin, as SSH does",
    )
    p.add_argument(
        "--local",
        action="store_true",
        help="start a server of your own in this process (SQLite in your data directory)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="a quick race: into the public pool as soon as the server welcomes you, to"
        " race players of about your rating (docs/protocol.md 4.26)",
    )
    p.set_defaults(func=cmd_play)

    p = sub.add_parser(
        "db",
        help="the database schema: upgrade it, or show where it is; recompute-ratings:"
        " compute every rating again from the stored results and compare (exit 2: differ)",
        description="The server's database, by hand (yukon serve migrates it on start"
        " anyway). upgrade: migrate the schema to the latest revision; current: show the"
        " revision it is at; recompute-ratings: compute every rating again from the stored"
        " results and compare them with the stored numbers (exit 2 when they differ)."
        " --db names the database, as for yukon serve.",
    )
    p.add_argument(
        "action",
        choices=("upgrade", "current", "recompute-ratings"),
        help="upgrade, current or recompute-ratings",
    )
    _add_db_option(p)
    p.set_defaults(func=cmd_db)

    from .mod import add_mod_parser  # issue 40: the operator's command (docs/fairplay.md)

    add_mod_parser(sub, _add_db_option)
    return parser


def _add_db_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        default=_env("DB", "sqlite:///yukon.db"),
        metavar="URL",
        help="database URL, such as postgresql://user@host/yukon"
        " (env YUKON_DB; default sqlite:///yukon.db)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # ``yukon`` alone: what it can do, not "arguments are required"
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        status: int = args.func(args)
    except YukonError as exc:
        print(f"yukon {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return status
