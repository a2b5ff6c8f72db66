"""The cluster's failover drill: kill the node that owns a race, through a load balancer.

Run from the repository root against a running cluster, such as docker-compose.cluster.yml
(README, "A cluster")::

    F="docker-compose -f docker-compose.cluster.yml"
    HEALTHZ="import urllib.request as u; u.urlopen('http://127.0.0.1:8765/healthz')"
    python -m bench.cluster_drill --url ws://127.0.0.1:8765 \\
        --sql "$F exec -T db psql -U yukon -d yukon -At" \\
        --redis "$F exec -T redis redis-cli" \\
        --kill "$F kill -s SIGKILL {node}" \\
        --restart "$F start {node}" \\
        --ready "$F exec -T {node} python -c \\"$HEALTHZ\\"" \\
        --kills 3

The drill talks to the cluster only through ``--url`` (the load balancer) and the commands
it is given: ``--sql`` reads SQL on its standard input and prints rows as ``a|b|c``
(psql -At); ``--kill``, ``--restart`` and ``--ready`` are run with ``{node}``
replaced by a node id (the cluster's ``YUKON_NODE_ID``s must be the names those commands
take, as in the compose file); ``--redis`` (optional) is a redis-cli, used only to say
which node each player reached.

Each round (``--kills`` of them):

1. five players connect through the load balancer (it spreads them over the nodes); they
   register once, in the first round, and say hello with their tokens after that;
2. ann creates a room on the deal YU1-C-AAAAAAB (a line from the solver), bob, cy and dan join
   and get ready, eve watches, ann starts (a player whose join or watch reached another
   node than the room's follows the ``route`` it is sent, reconnecting with ``?node=``, as
   the project's clients do; ``--no-follow``: it stays there, relayed); all four play
   the deal's winning line at ``--rate`` moves a second (the server's flood limit is 20):
   ann half of it, bob 10 moves, cy 5, dan 8;
3. the race's owner is read from ``live_races``, and ``--kill`` is run on it (SIGKILL: no
   goodbye, no last journal group);
4. every player, once its connection is closed (broken by the load balancer, or 1012 from
   its node), reconnects to ``--url`` with its token and resends every acknowledged move
   the server does not have (docs/protocol.md, 4.19), after following a ``route`` to the
   room's new node if it is sent one; eve watches the room again. The time from the start
   of the kill command to each resume (on the room's node, when following) is measured;
5. the race finishes: ann and bob play the rest of the line (ann first), cy and dan
   resign; every player and eve must get the same result (ann 1st and bob 2nd, won; cy
   and dan resigned), and the database must hold the race, taken over (a new owner,
   epoch 2), with each player's result and exactly the moves they were told were
   accepted, in order, none twice;
6. ``--restart`` brings the killed node back, and the drill waits for ``--ready``.

It prints each round's figures, the median over the rounds, and ends with ``PASS`` or
``FAIL: ...`` (exit status 0 or 1). It plays only where ``--url`` points, and stops by
itself: every wait is bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

if __package__ in (None, ""):  # run as ``python bench/cluster_drill.py``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from bench.bot import Recorder
from protocol.messages import (
    Accepted,
    Create,
    Error,
    Hello,
    Join,
    Leave,
    Left,
    MoveMsg,
    Race,
    Ready,
    Resign,
    Result,
    Room,
    Route,
    Start,
    Watch,
    Welcome,
)
from solver import solve

#: The deal every round races (the tests' winning game).
DEAL = "YU1-C-AAAAAAB"
TIMEOUT = 20.0  # seconds: the bound on every wait for a frame
RESUME_LIMIT = 10.0  # seconds from the kill to every player resumed (docs/cluster.md)
NAMES = ("ann", "bob", "cy", "dan")
#: How far into the line each player gets before the kill.
BEFORE_KILL = {"ann": None, "bob": 10, "cy": 5, "dan": 8}  # None: half the line


class Player(Recorder):
    """A client with a roomier timeout: a resume may wait for a takeover."""

    timeout = TIMEOUT


def winning_line() -> tuple[str, list[str]]:
    """The drill's deal and a line that wins it, from the solver (a few milliseconds)."""
    solution = solve(DEAL)
    assert solution.verdict == "won" and solution.moves, f"{DEAL} should be won"
    return DEAL, list(solution.moves)


@dataclass
class Seat:
    """One player of the drill: its name and token, its connection, what was accepted."""

    name: str
    token: str | None = None
    client: Player | None = None
    acked: list[tuple[int, str]] = field(default_factory=list)
    #: The player follows ``route`` to its room's node (``--follow``, as both of the
    #: project's clients do), and ``node`` is the one it was sent to (``?node=``).
    follow: bool = False
    node: str | None = None
    #: Routes followed this round.
    routes: int = 0

    @property
    def c(self) -> Player:
        assert self.client is not None
        return self.client


# -- the cluster's side: commands --------------------------------------------------------------


def run(command: str, node: str = "", stdin: str | None = None, timeout: float = 60.0) -> str:
    """Run one of the drill's commands through the shell, ``{node}`` filled in."""
    done = subprocess.run(
        command.replace("{node}", node),
        shell=True,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{command!r} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def sql(command: str, query: str) -> list[list[str]]:
    """Rows of ``query`` through the ``--sql`` command (psql -At)."""
    out = run(command, stdin=query)
    return [line.split("|") for line in out.splitlines() if line]


def quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def gateways(redis_cli: str, sql_cmd: str, names: list[str]) -> dict[str, str]:
    """The node each player's session is on (``session:{id}`` in Redis, docs/cluster.md)."""
    rows = sql(
        sql_cmd, f"SELECT name, id FROM players WHERE name IN ({','.join(map(quote, names))})"
    )
    out = {}
    for name, pid in rows:
        value = run(f"{redis_cli} GET yukon:session:{pid}").strip()
        out[name] = value.split()[0] if value else "?"
    return out


# -- the players' side ---------------------------------------------------------------------------


async def hello(url: str, seat: Seat) -> Welcome:
    """Connect through the load balancer and say hello: with the name the first time, with
    the token after that."""
    target = f"{url}/?node={seat.node}" if seat.node else url
    seat.client = Player(await connect(target, open_timeout=TIMEOUT))
    name = None if seat.token else seat.name
    await seat.c.send(Hello(1, name=name, token=seat.token, follow=seat.follow))
    welcome: Welcome = await seat.c.expect(Welcome)
    seat.token = welcome.token
    return welcome


#: How long a follower waits for a ``route`` after an answer that may bring one: the room's
#: node sends it right behind the answer, in the same event.
ROUTE_WAIT = 1.0


async def routed(url: str, seat: Seat, answer: type, **match: Any) -> Any:
    """After a join, watch or resume: if the room's node sends ``route`` behind its answer,
    follow it as the clients do (close, reconnect with ``?node=``, hello with the token)
    and return the answer the room's node gives there (``answer``, its resync); else the
    first answer. A relayed player who does not follow gets the first answer only."""
    first = await seat.c.expect(answer, **match)
    if not seat.follow:
        return first
    try:
        route: Route = await asyncio.wait_for(seat.c.expect(Route), ROUTE_WAIT)
    except TimeoutError:
        return first  # on the room's node already
    seat.node = route.node
    seat.routes += 1
    await seat.c.ws.close()
    await hello(url, seat)
    return await seat.c.expect(answer, **match)


async def play(seat: Seat, moves: list[str], first: int, rate: float) -> None:
    for seq, move in enumerate(moves, start=first):
        await seat.c.send(MoveMsg(seq, move))
        reply = await seat.c.expect(Accepted, seq=seq)
        if reply.move != move:
            raise AssertionError(f"{seat.name}: {move} accepted as {reply.move}")
        seat.acked.append((seq, move))
        await asyncio.sleep(1 / rate)


async def closed(seat: Seat) -> int | None:
    """Wait for the connection to close; the close code, or None if it just broke."""
    try:
        while True:
            await asyncio.wait_for(seat.c.ws.recv(), TIMEOUT)
    except ConnectionClosed as exc:
        return exc.rcvd.code if exc.rcvd else None
    finally:
        seat.c.ws.transport.abort()


async def resume(url: str, seat: Seat, give_up: float) -> Race:
    """Reconnect with the token until the race is back, and resend what the server lost.
    A 1012 (the room's node went away) or a refused connection is tried again, as the
    client does."""
    while True:
        try:
            seat.node = None  # the room may be anywhere now: the balancer picks, as clients do
            await hello(url, seat)
            race: Race = await routed(url, seat, Race)
            for seq, move in seat.acked:
                if seq > race.seq:
                    await seat.c.send(MoveMsg(seq, move))
                    await seat.c.expect(Accepted, seq=seq)
            return race
        except (ConnectionClosed, InvalidHandshake, InvalidStatus, OSError, TimeoutError):
            if time.monotonic() > give_up:
                raise
            await asyncio.sleep(0.2)


async def rewatch(url: str, seat: Seat, room: str, give_up: float) -> None:
    while True:
        try:
            seat.node = None
            await hello(url, seat)
            await seat.c.send(Watch(room))
            await routed(url, seat, Room, you="spectator")
            return
        except (ConnectionClosed, InvalidHandshake, InvalidStatus, OSError, TimeoutError):
            if time.monotonic() > give_up:
                raise
            await asyncio.sleep(0.2)


# -- one round -------------------------------------------------------------------------------------


async def all_ready(host: Seat, players: int) -> None:
    while True:
        room: Room = await host.c.expect(Room)
        if len(room.players) == players and all(p.ready for p in room.players):
            return


async def round_(args: argparse.Namespace, seats: dict[str, Seat], n: int) -> dict[str, Any]:
    problems: list[str] = []
    code, line = winning_line()
    half = len(line) // 2
    upto = {name: half if k is None else k for name, k in BEFORE_KILL.items()}
    for seat in seats.values():
        seat.acked = []
        seat.follow = args.follow
        seat.node = None
        seat.routes = 0
        await hello(args.url, seat)
    ann, bob, cy, dan, eve = (seats[k] for k in ("ann", "bob", "cy", "dan", "eve"))

    await ann.c.send(Create(code=code, max_players=4))
    room: Room = await ann.c.expect(Room)
    for p in (bob, cy, dan):
        await p.c.send(Join(room.room))
        await routed(args.url, p, Room, room=room.room)
        await p.c.send(Ready(True))
    await all_ready(ann, 4)
    await eve.c.send(Watch(room.room))
    await routed(args.url, eve, Room, you="spectator")
    moved_before = sum(s.routes for s in seats.values())
    await ann.c.send(Start())
    for p in (ann, bob, cy, dan):
        await p.c.expect(Race)
    spread = {}
    if args.redis:
        spread = await asyncio.to_thread(
            gateways, args.redis, args.sql, [s.name for s in seats.values()]
        )
        # The directory notes a session at a hello that storage answers; a player who
        # followed a route resumed on the room's node from memory: that node is theirs.
        spread = {s.name: s.node or spread.get(s.name, "?") for s in seats.values()}

    await asyncio.gather(*(play(seats[k], line[: upto[k]], 1, args.rate) for k in NAMES))
    race_row = await asyncio.to_thread(
        sql, args.sql, f"SELECT uid, owner, epoch FROM live_races WHERE room = {quote(room.room)}"
    )
    if len(race_row) != 1:
        raise RuntimeError(f"live_races has {len(race_row)} rows for room {room.room}")
    uid, owner, epoch = race_row[0]

    # The kill: every connection is then waited for, and resumed once it closed.
    closes = [asyncio.create_task(closed(s)) for s in seats.values()]
    await asyncio.sleep(0)
    killed = time.monotonic()
    await asyncio.to_thread(run, args.kill, owner)
    kill_took = time.monotonic() - killed
    give_up = killed + 30.0

    async def back(seat: Seat, close: asyncio.Task[int | None]) -> tuple[str, float, Any]:
        code_ = await close
        if seat is eve:
            await rewatch(args.url, seat, room.room, give_up)
        else:
            await resume(args.url, seat, give_up)
        return seat.name, time.monotonic() - killed, code_

    resumed = await asyncio.gather(
        *(back(s, c) for s, c in zip(seats.values(), closes, strict=True))
    )
    player_times = [t for name, t, _ in resumed if name != eve.name]
    taken = await asyncio.to_thread(
        sql, args.sql, f"SELECT owner, epoch FROM live_races WHERE uid = {quote(uid)}"
    )
    if not taken or taken[0][0] == owner or taken[0][1] != str(int(epoch) + 1):
        problems.append(f"round {n}: after the kill live_races says {taken} (was {owner})")
    all_back = max(player_times)
    if all_back > RESUME_LIMIT:
        problems.append(f"round {n}: players resumed {all_back:.1f} s after the kill")

    # The rest of the race: ann wins, then bob, cy and dan resign.
    await play(ann, line[upto["ann"] :], upto["ann"] + 1, args.rate)
    await play(bob, line[upto["bob"] :], upto["bob"] + 1, args.rate)
    await cy.c.send(Resign())
    await dan.c.send(Resign())
    results: list[Result] = [await s.c.expect(Result) for s in (ann, bob, cy, dan, eve)]
    ranks = [(r.name, r.rank, r.outcome) for r in results[0].ranks]
    if ranks[:2] != [(ann.name, 1, "won"), (bob.name, 2, "won")] or sorted(
        (r[0], r[2]) for r in ranks[2:]
    ) != [(cy.name, "resigned"), (dan.name, "resigned")]:
        problems.append(f"round {n}: ranks {ranks}")
    if any(r != results[0] for r in results):
        problems.append(f"round {n}: not every player got the same result")

    # The database: the race was taken over, and every accepted move is kept, once.
    after = await asyncio.to_thread(
        sql, args.sql, f"SELECT count(*) FROM live_races WHERE uid = {quote(uid)}"
    )
    if after != [["0"]]:
        problems.append(f"round {n}: the race is still in live_races")
    stored = await asyncio.to_thread(
        sql,
        args.sql,
        "SELECT p.name, r.outcome, r.rank,"
        " coalesce(string_agg(m.move, ' ' ORDER BY m.n), '')"
        " FROM results r JOIN races ra ON ra.id = r.race_id"
        " JOIN players p ON p.id = r.player_id LEFT JOIN moves m ON m.result_id = r.id"
        f" WHERE ra.uid = {quote(uid)} GROUP BY p.name, r.outcome, r.rank ORDER BY r.rank",
    )
    acked = {s.name: [m for _, m in s.acked] for s in (ann, bob, cy, dan)}
    seen = {row[0]: row for row in stored}
    for seat in (ann, bob, cy, dan):
        row = seen.get(seat.name)
        if row is None:
            problems.append(f"round {n}: no stored result for {seat.name}")
            continue
        moves = row[3].split()
        if moves[: len(acked[seat.name])] != acked[seat.name] or (
            row[1] == "won" and moves != acked[seat.name]
        ):
            problems.append(f"round {n}: {seat.name}'s stored moves differ from the accepted ones")
    races = await asyncio.to_thread(
        sql, args.sql, f"SELECT count(*) FROM races WHERE uid = {quote(uid)}"
    )
    if races != [["1"]]:
        problems.append(f"round {n}: the race is stored {races} times")

    # The killed node comes back before the next round.
    await asyncio.to_thread(run, args.restart, owner)
    deadline = time.monotonic() + 120
    while True:
        try:
            await asyncio.to_thread(run, args.ready, owner, None, 30.0)
            break
        except (RuntimeError, subprocess.TimeoutExpired):
            if time.monotonic() > deadline:
                problems.append(f"round {n}: {owner} not ready again after 120 s")
                break
            await asyncio.sleep(1)
    await asyncio.sleep(args.settle)
    # Out of the room before the next round (the players' tokens are used again); the
    # spectator first: the room closes when its last player leaves.
    for seat in (eve, ann, bob, cy, dan):
        await seat.c.send(Leave())
        while not isinstance(reply := await seat.c.recv(), Left | Error):
            pass
        if isinstance(reply, Error):
            problems.append(f"round {n}: {seat.name}'s leave answered {reply}")
        await seat.c.ws.close()

    return {
        "owner killed": f"{owner} (epoch {epoch})",
        "taken over by": " epoch ".join(taken[0]) if taken else "-",
        "players' nodes": ", ".join(f"{k} {v}" for k, v in spread.items()) or "-",
        "routes followed (join, resume)": f"{moved_before}, "
        f"{sum(s.routes for s in seats.values()) - moved_before}",
        "kill command took s": round(kill_took, 2),
        "closes (1012 or broken)": ", ".join(f"{name} {c}" for name, _, c in resumed),
        "each resumed after s": ", ".join(f"{name} {t:.2f}" for name, t, _ in resumed),
        "all players resumed after s": round(all_back, 2),
        "moves kept (ann bob cy dan)": " ".join(
            str(len(acked[k.name])) for k in (ann, bob, cy, dan)
        ),
        "problems": problems,
    }


async def drill(args: argparse.Namespace) -> int:
    tag = secrets.token_hex(2)
    seats = {k: Seat(f"{k}{tag}") for k in (*NAMES, "eve")}
    problems: list[str] = []
    times: list[float] = []
    for n in range(1, args.kills + 1):
        try:
            figures = await round_(args, seats, n)
        except Exception as exc:
            print(f"FAIL: round {n}: {type(exc).__name__}: {exc}")
            for seat in seats.values():
                if seat.client is not None:
                    print(f"  {seat.name}'s last frames: {seat.client.frames[-3:]}")
            raise
        problems += figures.pop("problems")
        times.append(figures["all players resumed after s"])
        print(f"round {n}")
        for key, value in figures.items():
            print(f"  {key:34} {value}")
    print(f"median time from the kill to every player resumed: {statistics.median(times):.2f} s")
    print(f"  (rounds: {', '.join(f'{t:.2f}' for t in times)})")
    if problems:
        print("FAIL: " + "; ".join(problems))
        return 1
    print("PASS")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.cluster_drill",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--url", required=True, help="the load balancer, ws://HOST:PORT")
    parser.add_argument("--sql", required=True, help="reads SQL, prints rows a|b (psql -At)")
    parser.add_argument("--kill", required=True, help="kills node {node} (SIGKILL)")
    parser.add_argument("--restart", required=True, help="starts node {node} again")
    parser.add_argument("--ready", required=True, help="exits 0 once node {node} serves")
    parser.add_argument("--redis", help="redis-cli command (to show who reached which node)")
    parser.add_argument("--kills", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--rate", type=float, default=12.0, help="moves a second per player")
    parser.add_argument(
        "--settle", type=float, default=6.0, help="seconds after ready (health checks)"
    )
    parser.add_argument(
        "--follow",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="players follow route to their room's node, as the project's clients do"
        " (default); --no-follow: every frame of a player on another node is relayed",
    )
    args = parser.parse_args(argv)
    return asyncio.run(drill(args))


if __name__ == "__main__":
    raise SystemExit(main())
