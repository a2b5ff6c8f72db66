"""``yukon mod``: the operator's command (issue 40, item 5; docs/fairplay.md).

Reads and writes the moderation tables of a server's database (``--db``, as ``yukon db``)
through ``server.storage.moderation``: the review queue, an account's record, marks,
renames, closed, muted and hidden accounts, voids, the audit log, and undo. Every action writes
one audit entry with the operator (``--by``, the OS user by default) and the reason, and
prints it as one line. A refusal (an unknown name, a mark already in force, an entry
undone before) is one line on stderr and exit status 2; a database that cannot be
reached, exit 1. Never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from server.storage.moderation import Account, LogEntry, ModerationStore, QueueItem

__all__ = ["add_mod_parser", "cmd_mod"]

EXIT_USAGE = 2
EXIT_DATABASE = 1
#: The longest operator name (``moderation_log.operator``).
MAX_OPERATOR = 64


class _Refused(Exception):
    """A refusal of the command itself (not of the store): one line, exit 2."""


def _operator() -> str:
    try:
        return getpass.getuser()[:MAX_OPERATOR] or "operator"
    except (OSError, KeyError):  # no user name to be found (a container without one)
        return "operator"


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ts))


def _entry_id(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an entry number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not an entry number (1 or more)")
    return value


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= 10_000:
        raise argparse.ArgumentTypeError(f"{text} is not from 1 to 10000")
    return value


def _points(refunds: Any, verb: str) -> str:
    """What a mark gave back, or its unmark or undo took back, in a few words."""
    if not refunds:
        return ""
    total = sum(float(r["points"]) for r in refunds)
    people = len({r["player_id"] for r in refunds})
    return f" ({verb} {total:.0f} points, {people} opponent(s), {len(refunds)} race(s))"


def summary(entry: LogEntry) -> str:
    """An audit entry as one line: what was done, to whom, by whom, why."""
    d = entry.details
    who = entry.name or "?"
    match entry.action:
        case "mark":
            what = f"marked {who} {d.get('kind')}"
            if d.get("closed"):
                what += f" (closed queue entries {', '.join(map(str, d['closed']))})"
            what += _points(d.get("refunds"), "refunded")
        case "unmark":
            what = f"unmarked {who} {d.get('kind')}"
            what += _points(d.get("taken_back"), "took back")
        case "rename":
            what = f"renamed {d.get('from')} to {d.get('to')}"
        case "close" | "reopen" | "mute" | "unmute":
            what = (
                f"{entry.action}d {who}"
                if entry.action.endswith("e")
                else f"{entry.action}ed {who}"
            )
        case "hide":
            what = f"hid {who} from the boards"
            if d.get("auto"):
                what += (
                    f" (auto-hide {d['auto']}: results {', '.join(map(str, d.get('results', [])))})"
                )
        case "unhide":
            what = f"put {who} back on the boards"
        case "void":
            what = f"voided race {entry.race} for {', '.join(d.get('players', []))}"
        case "dismiss":
            what = f"dismissed queue entry {d.get('item')} ({d.get('kind')} on {who})"
        case "undo":
            what = f"undid entry {entry.undoes} ({d.get('action')}"
            what += f" of {who})" if entry.name else ")"
            done = d.get("undo") or {}
            what += _points(done.get("taken_back"), "took back")
            what += _points(done.get("refunds"), "refunded")
        case _:
            what = f"{entry.action} {who}"
    line = f"entry {entry.id}: {entry.operator} {what}: {entry.reason}"
    if entry.undone_by is not None:
        line += f" [undone by entry {entry.undone_by}]"
    return line


def _queue_line(item: QueueItem) -> str:
    parts = [f"#{item.id}", _when(item.at), item.kind, item.name]
    if item.race:
        parts.append(f"race {item.race}")
    if item.rule:
        parts.append(item.rule)
    if item.reporter:
        parts.append(f"reported by {item.reporter}")
    if item.other:
        parts.append(f"with {item.other}")
    if item.note:
        parts.append(repr(item.note))
    if item.evidence:
        parts.append(json.dumps(item.evidence, sort_keys=True, separators=(",", ":")))
    if item.state != "open":
        parts.append(f"[{item.state} by {item.closed_by}]")
    return "  ".join(parts)


def _account_text(account: Account) -> str:
    state = ", ".join(
        words
        for flag, words in (
            (account.closed, "closed"),
            (account.muted, "muted"),
            (account.hidden, "hidden from the boards"),
        )
        if flag
    )
    lines = [
        f"{account.name} (player {account.player_id}), registered {_when(account.registered)}",
        f"  state: {state or 'open'}",
        f"  rating: {account.rating if account.rating is not None else 'none (no rated race)'}",
    ]
    lines.append("  marks:" if account.marks else "  marks: none")
    for m in account.marks:
        text = f"    {m.kind}: {m.reason} ({m.by}, {_when(m.at)}, entry {m.entry})"
        if not m.in_force and m.undone_at is not None:
            text += f", lifted by {m.undone_by}, {_when(m.undone_at)} (entry {m.undone_entry})"
        lines.append(text)
    lines.append(
        "  flags and reports about them:" if account.queue else "  flags and reports: none"
    )
    lines += [f"    {_queue_line(q)}" for q in account.queue]
    if account.reported:
        lines.append("  reports they made:")
        lines += [f"    {_queue_line(q)}" for q in account.reported]
    lines.append(f"  runs (newest {len(account.runs)}):" if account.runs else "  runs: none")
    for r in account.runs:
        lines.append(
            f"    {r.race}  {_when(r.finished_at)}  {r.rules}  {r.outcome} rank {r.rank}"
            f"  {r.time_ms / 1000:.1f} s  {r.moves} moves"
            + ("  rated" if r.rated else "")
            + ("  VOIDED" if r.voided else "")
        )
        lines.append(f"      {_signals_text(r.signals, r.flags)}")
    given = [r for r in account.refunded if r.in_force]
    if given:
        lines.append(
            f"  its marks gave back {sum(r.points for r in given):.0f} points to"
            f" {len({r.player_id for r in given})} opponent(s)"
            f" for {len({r.race for r in given})} race(s)"
        )
    if account.refunds:
        total = sum(r.points for r in account.refunds)
        lines.append(
            f"  an engine or boost mark now would give back {total:.0f} points to"
            f" {len({r.player_id for r in account.refunds})} opponent(s)"
            f" for {len({r.race_id for r in account.refunds})} race(s)"
        )
    return "\n".join(lines)


def _figure(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _signals_text(figures: dict[str, Any] | None, flags: tuple[str, ...]) -> str:
    """A run's fair-play signals on one line (docs/fairplay.md, "Signals and flags"):
    the whole-run CV, the lowest 14-move window, the intervals under 50 ms, the sustained
    pace and its percentile among human runs of the rule set, and the rules that fired."""
    if figures is None:
        return "signals: none (stored before the server recorded them)"
    pct = figures.get("pace_pct")
    pace = f"pace {_figure(figures.get('pace'), 2)}/s"
    pace += (
        f" (p{_figure(pct, 1)} of {figures.get('history')} human runs)"
        if pct is not None
        else " (no human runs yet)"
    )
    return (
        f"signals: {figures.get('n')} intervals  cv {_figure(figures.get('cv'))}"
        f"  lowest window cv {_figure(figures.get('window_cv'))}"
        f"  under 50 ms {figures.get('fast')}  {pace}"
        f"  flags: {', '.join(flags) if flags else 'none'}"
    )


def _account_json(account: Account) -> dict[str, Any]:
    """``show --json``: times as ISO 8601 UTC, as ``log --json`` and ``queue --json``."""
    from server.storage.moderation import iso

    return {
        "player": account.name,
        "id": account.player_id,
        "registered": iso(account.registered),
        "closed": account.closed,
        "muted": account.muted,
        "hidden": account.hidden,
        "rating": account.rating,
        "marks": [
            {
                "kind": m.kind,
                "reason": m.reason,
                "by": m.by,
                "at": iso(m.at),
                "entry": m.entry,
                "in_force": m.in_force,
                "lifted_by": m.undone_entry,
            }
            for m in account.marks
        ],
        "queue": [q.as_json() for q in account.queue],
        "reported": [q.as_json() for q in account.reported],
        "runs": [
            {
                "race": r.race,
                "finished_at": iso(r.finished_at),
                "rules": r.rules,
                "outcome": r.outcome,
                "rank": r.rank,
                "time_ms": r.time_ms,
                "moves": r.moves,
                "rated": r.rated,
                "voided": r.voided,
                "signals": r.signals,
                "flags": list(r.flags),
            }
            for r in account.runs
        ],
        "refunds": [
            {"player_id": r.player_id, "race_id": r.race_id, "cost": r.cost, "points": r.points}
            for r in account.refunds
        ],
        "refunded": [
            {
                "player_id": r.player_id,
                "race": r.race,
                "points": r.points,
                "rating_before": r.rating_before,
                "rating_after": r.rating_after,
                "entry": r.entry,
                "taken_back_by": r.undone_entry,
            }
            for r in account.refunded
        ],
    }


def _dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


# -- the subcommands: each takes the store and the arguments, and returns what to print -------


async def _queue(mod: ModerationStore, args: argparse.Namespace) -> str:
    states = ("open", "closed", "dismissed") if args.all else ("open",)
    items = await mod.queue(states=states, limit=args.limit)
    if args.json:
        return _dumps([q.as_json() for q in items])
    if not items:
        return "the review queue is empty" if args.all else "no open entries in the review queue"
    return "\n".join(_queue_line(q) for q in items)


async def _show(mod: ModerationStore, args: argparse.Namespace) -> str:
    account = await mod.account(name=args.name, now=time.time())
    return _dumps(_account_json(account)) if args.json else _account_text(account)


async def _log(mod: ModerationStore, args: argparse.Namespace) -> str:
    entries = await mod.log(limit=args.limit, name=args.player)
    if args.json:
        return _dumps([e.as_json() for e in entries])
    if not entries:
        return "the audit log is empty"
    return "\n".join(f"{_when(e.at)}  {summary(e)}" for e in entries)


def _by(args: argparse.Namespace) -> dict[str, Any]:
    reason = args.reason.strip()
    if not reason:
        raise _Refused("--reason: say why (the audit log keeps it)")
    by = args.by.strip()
    if not 1 <= len(by) <= MAX_OPERATOR:
        raise _Refused(f"--by: an operator's name is 1 to {MAX_OPERATOR} characters")
    return {"reason": reason, "operator": by, "now": time.time()}


async def _mark(mod: ModerationStore, args: argparse.Namespace) -> str:
    return summary(await mod.mark(name=args.name, kind=args.kind, **_by(args)))


async def _unmark(mod: ModerationStore, args: argparse.Namespace) -> str:
    return summary(await mod.unmark(name=args.name, kind=args.kind, **_by(args)))


async def _rename(mod: ModerationStore, args: argparse.Namespace) -> str:
    return summary(await mod.rename(name=args.old, new_name=args.new, **_by(args)))


async def _state(mod: ModerationStore, args: argparse.Namespace) -> str:
    return summary(await mod.set_state(action=args.mod_command, name=args.name, **_by(args)))


async def _void(mod: ModerationStore, args: argparse.Namespace) -> str:
    return summary(await mod.void(race=args.race, name=args.player, **_by(args)))


async def _dismiss(mod: ModerationStore, args: argparse.Namespace) -> str:
    return summary(await mod.dismiss(item=args.item, **_by(args)))


async def _undo(mod: ModerationStore, args: argparse.Namespace) -> str:
    return summary(await mod.undo(entry=args.entry, **_by(args)))


Action = Callable[["ModerationStore", argparse.Namespace], Awaitable[str]]

ACTIONS: dict[str, Action] = {
    "queue": _queue,
    "show": _show,
    "log": _log,
    "mark": _mark,
    "unmark": _unmark,
    "rename": _rename,
    "close": _state,
    "reopen": _state,
    "mute": _state,
    "unmute": _state,
    "hide": _state,
    "unhide": _state,
    "void": _void,
    "dismiss": _dismiss,
    "undo": _undo,
}


def cmd_mod(args: argparse.Namespace) -> int:
    from server.app import shown_url
    from server.storage import migrate
    from server.storage.moderation import ModerationError, ModerationStore
    from server.storage.sql import SqlStore, describe_error

    command = f"yukon mod {args.mod_command}"

    async def work() -> str:
        store = SqlStore(args.db)
        try:
            at = await migrate.current(store)
            if at != migrate.head():
                raise _Refused(
                    f"{shown_url(store.url)} is at {at or 'no schema'}, not {migrate.head()}:"
                    f" run yukon db upgrade --db URL first"
                )
            return await ACTIONS[args.mod_command](ModerationStore(store.engine), args)
        finally:
            await store.close()

    try:
        print(asyncio.run(work()))
    except ModerationError as exc:
        print(f"{command}: {exc} [{exc.code}]", file=sys.stderr)
        return EXIT_USAGE
    except _Refused as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # the database: unreachable, refused, ...
        print(f"{command}: {describe_error(exc)}", file=sys.stderr)
        return EXIT_DATABASE
    return 0


def add_mod_parser(
    sub: Any, add_db_option: Callable[[argparse.ArgumentParser], None]
) -> argparse.ArgumentParser:
    """Add ``yukon mod`` and its subcommands to the ``yukon`` parser's subparsers."""
    from server.storage.moderation_models import MARK_KINDS

    p: argparse.ArgumentParser = sub.add_parser(
        "mod",
        help="the operator's command: the review queue, marks, renames, closed and muted"
        " accounts, voids, the audit log, undo (docs/fairplay.md)",
        description="Moderate the accounts of a server's database (--db, as yukon db)."
        " Every action writes an entry to the audit log with the operator (--by) and the"
        " reason, and any entry can be undone (yukon mod undo ENTRY). Exit 2: refused.",
    )
    mods = p.add_subparsers(
        dest="mod_command", metavar="SUBCOMMAND", required=True, parser_class=type(p)
    )

    def command(name: str, help: str, *, writes: bool = True) -> argparse.ArgumentParser:
        q: argparse.ArgumentParser = mods.add_parser(name, help=help, description=help)
        add_db_option(q)
        if writes:
            q.add_argument("--reason", required=True, help="why: the audit log keeps it")
            q.add_argument(
                "--by",
                default=_operator(),
                metavar="OPERATOR",
                help="who acts, for the audit log (default: the OS user)",
            )
        return q

    q = command("queue", "the review queue, newest first: open flags and reports", writes=False)
    q.add_argument("--all", action="store_true", help="closed and dismissed entries too")
    q.add_argument("--limit", type=_limit, default=100, help="at most this many (100)")
    q.add_argument("--json", action="store_true", help="as JSON")
    q = command(
        "show",
        "an account: its state, marks, flags and reports, newest runs, and what an engine"
        " or boost mark would refund",
        writes=False,
    )
    q.add_argument("name", metavar="NAME")
    q.add_argument("--json", action="store_true", help="as JSON")
    q = command("log", "the audit log, newest first", writes=False)
    q.add_argument("--player", metavar="NAME", help="only the entries about this account")
    q.add_argument("--limit", type=_limit, default=50, help="at most this many (50)")
    q.add_argument("--json", action="store_true", help="as JSON")
    for name, help in (
        ("mark", "mark an account (closes its open queue entries)"),
        ("unmark", "lift a mark"),
    ):
        q = command(name, help)
        q.add_argument("name", metavar="NAME")
        q.add_argument("kind", choices=MARK_KINDS, metavar="|".join(MARK_KINDS))
    q = command("rename", "give an account a new name (the rules of names apply)")
    q.add_argument("old", metavar="OLD")
    q.add_argument("new", metavar="NEW")
    for name, help in (
        ("close", "close an account: it can no longer play"),
        ("reopen", "reopen a closed account"),
        ("mute", "mute an account: no chat, no reactions"),
        ("unmute", "lift a mute"),
        ("hide", "hide an account from the public boards (its rows stay stored)"),
        ("unhide", "put a hidden account back on the boards"),
    ):
        q = command(name, help)
        q.add_argument("name", metavar="NAME")
    q = command("void", "void a stored race's results, or one runner's (--player)")
    q.add_argument("race", metavar="RACE", help="the race's id, as replays and the log show it")
    q.add_argument("--player", metavar="NAME", help="only this runner's result")
    q = command("dismiss", "dismiss an open entry of the review queue")
    q.add_argument("item", type=_entry_id, metavar="QUEUE_ID")
    q = command("undo", "undo an entry of the audit log (itself one more entry)")
    q.add_argument("entry", type=_entry_id, metavar="ENTRY_ID")
    p.set_defaults(func=cmd_mod)
    return p
