"""Ghost rooms (server/rooms/ghosts.py, the ghost in server/domain/race.py): the hub on a fake
clock. The I/O layer's part (finding the run, whether it may be raced) is played here by
the test, as ``Clients`` plays storage's; tests/server/test_ghost_server.py runs it for
real over sockets.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import Any

from protocol import Game, GameCode
from protocol.commitment import commitment
from protocol.messages import (
    Accepted,
    Board,
    BoardPage,
    Countdown,
    Create,
    Daily,
    Error,
    Ghost,
    Hello,
    History,
    HistoryPage,
    Join,
    Leave,
    Left,
    MoveMsg,
    PlayerProgress,
    PostMortem,
    Progress,
    RankEntry,
    Rematch,
    Replay,
    ReplayPage,
    Resign,
    Result,
    Room,
    Start,
    Watch,
    Welcome,
)
from protocol.messages import Race as RaceMsg
from server.domain.records import GhostRun, LiveRace
from server.rooms.effects import Query

from .domain.test_replays import ask, wait_for_live_race
from .pages.test_http import MIDNIGHT, TODAY, Clock
from .test_rooms import SALT, WIN_CODE, WIN_MOVES, Clients, error_codes, kinds, persists, to
from .wire import Client, open_client, room_with, running_server, start_race, winning_line

#: The recorded run: the winning line, one move a second from 1 s on.
STEP_MS = 1000
ACTIONS = tuple((STEP_MS * (i + 1), move) for i, move in enumerate(WIN_MOVES))
END_MS = ACTIONS[-1][0]


def won_run(**changes: Any) -> GhostRun:
    game = Game.from_code(WIN_CODE)
    for move in WIN_MOVES:
        game.play(move)
    fields: dict[str, Any] = {
        "race": "old-7",
        "name": "zed",
        "code": str(GameCode.parse(WIN_CODE)),
        "salt": None,
        "daily": None,
        "actions": ACTIONS,
        "outcome": "won",
        "time_ms": END_MS,
        "moves": game.move_count,
        "score": game.score,
        "foundations": 52,
        "hinted": False,
    }
    fields.update(changes)
    return GhostRun(**fields)


def figures(code: str, actions: tuple[tuple[int, str], ...], ms: int) -> tuple[int, int, int]:
    """(foundations, score, moves) of the run after its actions up to ``ms``."""
    game = Game.from_code(code)
    for at, move in actions:
        if at <= ms:
            game.play(move)
    return game.cards_on_foundations, game.score, game.move_count


def ghost_room(cl: Clients, name: str = "ann", run: GhostRun | None = None) -> tuple[int, Room]:
    """``name`` asks for the ghost; storage's answer is ``run``: the lobby."""
    conn = cl.hello(name)
    asked = cl.send(conn, Ghost("old-7", "zed"))
    [query] = [e for e in asked if isinstance(e, Query)]
    assert query.message == Ghost("old-7", "zed") and query.conn == conn
    effects = cl._record(cl.hub.ghost_answered(conn, run or won_run(), cl.now))
    [room] = to(effects, conn)
    assert isinstance(room, Room)
    return conn, room


def begin(cl: Clients, conn: int) -> None:
    assert error_codes(cl.send(conn, Start()), conn) == []
    cl.race_start = cl.now + cl.config.countdown_s
    cl.tick(cl.race_start)


def test_a_ghost_room_is_a_private_one_player_lobby_on_the_runs_deal() -> None:
    cl = Clients()
    ann, room = ghost_room(cl)
    assert (room.state, room.max_players, room.ghost, room.host) == ("lobby", 1, "zed", "ann")
    assert room.code == str(GameCode.parse(WIN_CODE))  # a public deal: shown
    assert (room.commitment, room.undo, room.hints, room.time_limit) == (None, True, False, 1800)
    bob = cl.hello("bob")
    for entering in (Join(room.room), Watch(room.room)):
        assert error_codes(cl.send(bob, entering), bob) == ["no_such_room"]
    # One room at a time, and a ghost is asked for from outside any room.
    assert error_codes(cl.send(ann, Ghost("old-7", "zed")), ann) == ["already_in_room"]
    assert error_codes(cl.send(ann, Create()), ann) == ["already_in_room"]


def test_a_refusal_is_passed_on_and_frees_the_query() -> None:
    cl = Clients()
    ann = cl.hello("ann")
    cl.send(ann, Ghost("x-1", "zed"))
    cl.send(ann, Ghost("x-2", "zed"))
    assert error_codes(cl.send(ann, Ghost("x-3", "zed")), ann) == ["too_many_queries"]
    refusal = Error("race_running", "that race is still running")
    assert to(cl._record(cl.hub.ghost_answered(ann, refusal, cl.now)), ann) == [refusal]
    assert [e for e in cl.send(ann, Ghost("x-3", "zed")) if isinstance(e, Query)]


def test_the_answer_finds_the_asker_in_a_room_already() -> None:
    cl = Clients()
    ann = cl.hello("ann")
    cl.send(ann, Ghost("old-7", "zed"))
    cl.send(ann, Create())
    effects = cl._record(cl.hub.ghost_answered(ann, won_run(), cl.now))
    assert error_codes(effects, ann) == ["already_in_room"]
    assert cl.hub.rooms == 1


def test_the_ghost_moves_at_its_recorded_times_like_an_opponent() -> None:
    cl = Clients()
    ann, _ = ghost_room(cl)
    begin(cl, ann)
    t0 = cl.race_start
    start = cl.last(ann, Progress)
    assert start.players[0].name == "ann"
    assert start.ghost == PlayerProgress("zed", "playing", 0, 0, 0, None, True)
    assert cl.hub.next_deadline() == t0 + ACTIONS[0][0] / 1000  # its first move
    # Nothing before its first move; then each move's progress, held 100 ms as a live
    # opponent's, showing the run as it stood after its actions up to then.
    assert cl.tick(t0 + 0.999) == []
    for ms, _ in ACTIONS[:5]:
        cl.tick(t0 + ms / 1000)
        effects = cl.tick(t0 + ms / 1000 + cl.config.progress_hold_s)
        [shown] = to(effects, ann)
        assert isinstance(shown, Progress) and shown.ghost is not None
        found, score, moves = figures(WIN_CODE, ACTIONS, ms)
        assert (shown.ghost.foundations, shown.ghost.score, shown.ghost.moves) == (
            found,
            score,
            moves,
        )
        assert (shown.ghost.state, shown.ghost.time_ms) == ("playing", None)
        assert shown.elapsed_ms == ms + 100
    # A player's own move and the ghost's in one hold: one progress with both.
    ms = ACTIONS[5][0]
    effects = cl.move(ann, "6H>7", at=t0 + ms / 1000 - 0.05)
    assert kinds(effects, ann) == ["accepted"]
    cl.tick(t0 + ms / 1000)
    [both] = to(cl.after_hold(), ann)
    assert both.players[0].moves == 1 and both.ghost.moves == ACTIONS.index(ACTIONS[5]) + 1
    # Its win goes out at once, at its recorded time, with the time it won in.
    for at, _ in ACTIONS[6:-1]:
        cl.tick(t0 + at / 1000)
    effects = cl.tick(t0 + END_MS / 1000)
    won = [m for m in to(effects, ann) if isinstance(m, Progress)][-1]
    assert won.ghost == PlayerProgress(
        "zed", "won", 52, won_run().score, len(WIN_MOVES), END_MS, True
    )
    assert won.elapsed_ms == END_MS
    assert cl.hub.next_deadline() == t0 + 1800  # only the time limit is left
    # The ghost never ends the race: ann plays on alone.
    assert cl.hub.races_running == 1


def test_a_ghost_race_is_practice_the_ghost_not_stored_and_shown_in_the_result() -> None:
    cl = Clients()
    ann, _ = ghost_room(cl)
    begin(cl, ann)
    t0 = cl.race_start
    [live] = [j for j in cl.journal if isinstance(j, LiveRace)]
    assert (live.practice, live.ghost_race, live.ghost_player) == (True, "old-7", "zed")
    cl.tick(t0 + 2.5)
    effects = cl.send(ann, Resign(), at=t0 + 3)
    # The race is over when its runner is: the ghost does not hold it up.
    [record] = persists(effects)
    [row] = record.results
    assert (row.name, row.practice, row.rank) == ("ann", True, 1)
    assert record.daily_date is None and record.code == str(GameCode.parse(WIN_CODE))
    assert cl.tick(t0 + 4) == []  # no more ghost moves once the race is over
    effects = cl.commit(record.race_id, at=t0 + 5)
    [result] = [m for m in to(effects, ann) if isinstance(m, Result)]
    assert [r.name for r in result.ranks] == ["ann"]
    run = won_run()
    assert result.ghost == RankEntry(1, "zed", "won", END_MS, run.moves, run.score, 52)
    # A rematch races the same run on the same deal again.
    room = [m for m in to(cl.send(ann, Rematch()), ann) if isinstance(m, Room)][-1]
    assert (room.state, room.code, room.ghost) == ("lobby", record.code, "zed")
    assert cl.deals_drawn == 0
    begin(cl, ann)
    assert cl.last(ann, Progress).ghost == PlayerProgress("zed", "playing", 0, 0, 0, None, True)


def test_a_ghost_that_resigned_is_done_at_its_time_and_ranks_below_a_win() -> None:
    cl = Clients()
    short = ACTIONS[:3]
    f, s, m = figures(WIN_CODE, short, 10_000)
    run = won_run(actions=short, outcome="resigned", time_ms=5_000, moves=m, score=s, foundations=f)
    ann, _ = ghost_room(cl, run=run)
    begin(cl, ann)
    t0 = cl.race_start
    for ms, _ in short:
        cl.tick(t0 + ms / 1000)
    effects = cl.tick(t0 + 5)
    done = [p for p in to(effects, ann) if isinstance(p, Progress)][-1]
    assert done.ghost == PlayerProgress("zed", "resigned", f, s, m, 5_000, True)
    cl.play(ann, WIN_MOVES, step=0.06)
    [record] = cl.persisted
    effects = cl.commit(record.race_id)
    [result] = [x for x in to(effects, ann) if isinstance(x, Result)]
    assert result.ranks[0].outcome == "won" and result.ghost is not None
    assert (result.ghost.rank, result.ghost.outcome) == (2, "resigned")


def test_a_friend_run_of_today_s_daily_keeps_the_deal_secret() -> None:
    cl = Clients()
    today = dt.date(1970, 1, 1)
    secret = "YU1-C-AAAQEAYEAUDAOCAJBIFQYDIOB4"
    game = Game.from_code(secret)
    move = game.legal_moves()[0]
    game.play(move)
    run = won_run(
        code=secret,
        salt=SALT,
        daily=today,
        actions=((500, move),),
        outcome="resigned",
        time_ms=900,
        moves=1,
        score=game.score,
        foundations=game.cards_on_foundations,
    )
    ann, room = ghost_room(cl, run=run)
    assert (room.code, room.salt, room.ghost) == (None, None, "zed")
    assert room.commitment == commitment(GameCode.parse(secret), SALT)
    begin(cl, ann)
    t0 = cl.race_start
    cl.tick(t0 + 0.5)
    cl.tick(t0 + 0.9)
    effects = cl.send(ann, Resign(), at=t0 + 1)
    [record] = persists(effects)
    assert record.daily_date == today and record.room is None
    assert [r.practice for r in record.results] == [True]
    [result] = [m for m in to(cl.commit(record.race_id), ann) if isinstance(m, Result)]
    assert (result.code, result.salt) == (None, None)
    # Nothing the asker got names a move of the run, or the deal's code.
    for message in cl.messages(ann):
        assert move not in repr(message) and secret not in repr(message)
    # A rematch of it stays on the day's deal.
    room = [m for m in to(cl.send(ann, Rematch()), ann) if isinstance(m, Room)][-1]
    assert room.state == "lobby" and room.code is None and cl.deals_drawn == 0
    # Not a daily room of the player's own: from its lobby a daily is refused (once its
    # race is over, a daily leaves it first: issue 28).
    assert error_codes(cl.send(ann, Daily()), ann) == ["already_in_room"]


def test_a_resume_brings_the_ghost_back_where_it_stands() -> None:
    cl = Clients()
    ann, _ = ghost_room(cl)
    begin(cl, ann)
    t0 = cl.race_start
    cl.disconnect(ann, at=t0 + 1)
    cl.tick(t0 + 2.5)  # the ghost plays on while ann is away
    cl.after_hold()
    new, effects = cl.resume("ann", at=t0 + 3.5)
    msgs = to(effects, new)
    assert [m.TYPE for m in msgs] == ["welcome", "room", "race", "progress"]
    assert msgs[1].ghost == "zed"
    assert isinstance(msgs[2], RaceMsg)
    assert msgs[3].ghost.moves == 3 and msgs[3].elapsed_ms == 3500


def test_a_restart_brings_the_ghost_back_at_its_place_on_the_race_clock() -> None:
    before = Clients()
    ann, _ = ghost_room(before)
    begin(before, ann)
    before.tick(before.race_start + 4.2)
    [live] = [j for j in before.journal if isinstance(j, LiveRace)]
    after = Clients()
    after.registry, after.tokens = before.registry, dict(before.tokens)
    after.hub.restore(live, [], alive_ms=4_200, now=after.now, ghost=won_run())
    ann2, effects = after.resume("ann")
    [progress] = [m for m in to(effects, ann2) if isinstance(m, Progress)]
    assert progress.ghost is not None and progress.ghost.moves == 4
    [room] = [m for m in to(effects, ann2) if isinstance(m, Room)]
    assert room.ghost == "zed" and room.max_players == 1
    # Its next move comes at its recorded time on the rebuilt clock.
    assert after.hub.next_deadline() == after.now + 0.8
    after.tick(after.now + 0.8)
    [held] = to(after.after_hold(), ann2)
    assert held.ghost.moves == 5
    # A ghost race rebuilt without its run (not found again) goes on alone.
    lone = Clients()
    lone.registry, lone.tokens = before.registry, dict(before.tokens)
    lone.hub.restore(live, [], alive_ms=1_000, now=lone.now)
    conn, effects = lone.resume("ann")
    [progress] = [m for m in to(effects, conn) if isinstance(m, Progress)]
    assert progress.ghost is None


def test_the_countdown_and_start_are_the_room_s_own() -> None:
    cl = Clients()
    ann, _ = ghost_room(cl)
    effects = cl.send(ann, Start())
    assert kinds(effects, ann) == ["countdown", "room"]
    assert to(effects, ann)[0] == Countdown(3000)


# -- a real server ---------------------------------------------------------------------------


async def answer(client: Client, message: Any) -> Any:
    """Send a request; its answer (the next room or error)."""
    await client.send(message)
    while True:
        reply = await client.recv()
        if isinstance(reply, (Room, Error)):
            return reply


def strings(message: Any) -> list[str]:
    """Every str anywhere in a decoded message."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, (tuple, list)):
            for v in value:
                walk(v)
        elif hasattr(value, "FIELDS"):
            for f in value.FIELDS:
                walk(getattr(value, f.name))

    walk(message)
    return found


async def race_ghost(client: Client, until: type = Result) -> tuple[RaceMsg, list[Progress]]:
    """Start the ghost room's race; the progress frames until one whose ghost is done."""
    await client.send(Start())
    race = await client.expect(RaceMsg)
    seen: list[Progress] = []
    while True:
        m = await client.recv()
        if isinstance(m, Progress):
            seen.append(m)
            if m.ghost is not None and m.ghost.time_ms is not None:
                return race, seen


async def test_racing_a_finished_run_shows_it_at_its_recorded_pace(
    db_url: str, tmp_path: Path
) -> None:
    code, winning = winning_line()
    async with running_server(db_url, tmp_path) as server:
        ann, bob = await open_client(server, "ann"), await open_client(server, "bob")
        await room_with(ann, bob, code=code)
        await start_race(ann, bob)
        # While the race runs, its runs are not to be raced.
        cy = await open_client(server, "cy")
        running = await wait_for_live_race(server)
        refused = await answer(cy, Ghost(running, "bob"))
        assert isinstance(refused, Error) and refused.code == "race_running"
        for seq, move in enumerate(winning, start=1):
            await bob.send(MoveMsg(seq, move))
            await asyncio.sleep(0.002)
        await ann.send(Resign())
        result = await ann.expect(Result)
        assert result.race == running
        page = await ask(cy, Replay(result.race, "bob"))
        assert isinstance(page, ReplayPage)

        for wrong, why in (
            (Ghost("nope-1", "bob"), "no_such_race"),
            (Ghost(result.race, "dee"), "no_such_player"),
        ):
            refusal = await answer(cy, wrong)
            assert isinstance(refusal, Error) and refusal.code == why
        room = await answer(cy, Ghost(result.race, "BOB"))
        assert isinstance(room, Room)
        assert (room.state, room.max_players, room.ghost, room.code) == ("lobby", 1, "bob", code)
        _, seen = await race_ghost(cy)
        # Every progress shows the ghost as the run stood at that moment of its race.
        for p in seen:
            assert p.ghost is not None
            done = [a for a in page.actions if a[0] <= p.elapsed_ms]
            if p.ghost.time_ms is None:
                assert p.ghost.moves == len(done), (p.elapsed_ms, p.ghost)
                assert (p.ghost.foundations, p.ghost.score) == figures(code, done, 10**9)[:2]
            assert [q.name for q in p.players] == ["cy"]
        assert seen[-1].ghost == PlayerProgress(
            "bob", "won", 52, page.score, page.moves, page.time_ms, True
        )
        assert len(seen) > 2 and seen[-1].elapsed_ms >= page.time_ms
        await cy.send(Resign())
        mine = await cy.expect(Result)
        assert [r.name for r in mine.ranks] == ["cy"] and mine.code == code
        assert mine.ghost is not None and (mine.ghost.name, mine.ghost.rank) == ("bob", 1)
        # Practice: on no board; in cy's history, marked so; its own replay is served.
        await cy.send(Board("deal", code=code))
        board = await cy.expect(BoardPage)
        assert sorted(r.name for r in board.rows) == ["ann", "bob"] and board.you is None
        await cy.send(History())
        [row] = (await cy.expect(HistoryPage)).rows
        assert (row.practice, row.race, row.players) == (True, mine.race, 1)
        own = await ask(cy, Replay(mine.race, "cy"))
        assert isinstance(own, ReplayPage) and own.players == ("cy",)
        for c in (ann, bob, cy):
            await c.ws.close()


async def test_a_friend_s_run_of_today_s_daily_after_one_s_own_counted_attempt(
    db_url: str, tmp_path: Path
) -> None:
    clock = Clock(MIDNIGHT - 3600)
    async with running_server(db_url, tmp_path, wall_clock=clock) as server:
        code = str((await server.boards.dailies.get(TODAY)).code)
        ann = await open_client(server, "ann")
        await ann.send(Daily())
        await ann.expect(RaceMsg)
        game = Game.from_code(code)
        moves = []
        for seq in (1, 2):
            move = sorted(game.legal_moves())[0]
            game.play(move)
            moves.append(move)
            await ann.send(MoveMsg(seq, move))
            await ann.expect(Accepted, seq=seq)
            await asyncio.sleep(0.05)
        await ann.send(Resign())
        theirs = await ann.expect(Result)
        assert theirs.race is not None
        # Before bob's own counted attempt: neither form, nor the replay, nor a post-mortem.
        bob = await open_client(server, "bob")
        for ask_for in (Ghost(None, "ann"), Ghost(theirs.race, "ann")):
            refusal = await answer(bob, ask_for)
            assert isinstance(refusal, Error) and refusal.code == "not_public"
            assert code not in refusal.text
        # bob's attempt is running: still not.
        await bob.send(Daily())
        await bob.expect(RaceMsg)
        await bob.expect(Room)
        refusal = await answer(bob, Ghost(None, "ann"))
        assert isinstance(refusal, Error) and refusal.code == "already_in_room"
        await bob.send(Resign())
        await bob.expect(Result)
        await bob.send(Leave())
        await bob.expect(Left)
        missing = await answer(bob, Ghost(None, "cy"))
        assert isinstance(missing, Error) and missing.code == "no_such_player"
        # Now it may be raced: today's deal, its code secret, the day's commitment.
        choice = await server.boards.dailies.get(TODAY)
        start = len(bob.frames)
        room = await answer(bob, Ghost(None, "ANN"))
        assert isinstance(room, Room), room
        assert (room.code, room.ghost, room.commitment) == (None, "ann", choice.commitment)
        race, seen = await race_ghost(bob)
        assert race.view == Game.from_code(code).view()
        last = seen[-1].ghost
        assert last is not None and last.time_ms is not None
        assert (last.name, last.state, last.moves) == ("ann", "resigned", 2)
        assert (last.score, last.foundations) == (game.score, game.cards_on_foundations)
        await bob.send(Resign())
        result = await bob.expect(Result)
        assert result.code is None and result.salt is None and result.ghost is not None
        # Nothing bob got since names a move of ann's run, or the day's code.
        for frame in bob.frames[start:]:
            for text in strings(frame):
                assert ">" not in text and code not in text, frame
        # Practice: the daily board still holds the two counted attempts only, and the
        # ghost race, on today's deal, is served by no replay until the day's code is.
        await bob.send(Board("daily", date=TODAY.isoformat()))
        board = await bob.expect(BoardPage)
        assert board.you is not None and board.you.race != result.race
        assert {(r.name, r.race) for r in board.rows} == {
            ("ann", theirs.race),
            ("bob", board.you.race),
        }
        for asked in (Replay(result.race, "bob"), PostMortem(result.race, "bob")):
            refusal = await ask(bob, asked)
            assert isinstance(refusal, Error) and refusal.code == "not_public"
        # The id form of today's run works as well, once one's own attempt is over.
        await bob.send(Leave())
        await bob.expect(Left)
        room = await answer(bob, Ghost(theirs.race, "ann"))
        assert isinstance(room, Room) and room.code is None and room.ghost == "ann"
        for c in (ann, bob):
            await c.ws.close()


async def test_a_restart_brings_a_ghost_race_back_with_its_ghost(
    db_url: str, tmp_path: Path
) -> None:
    code, winning = winning_line()
    async with running_server(db_url, tmp_path) as server:
        ann = await open_client(server, "ann")
        await ann.send(Create(code=code, max_players=2))
        await ann.expect(Room)
        await ann.send(Start())
        await ann.expect(RaceMsg)
        for seq, move in enumerate(winning[:20], start=1):
            await ann.send(MoveMsg(seq, move))
            await ann.expect(Accepted, seq=seq)
            await asyncio.sleep(0.01)
        await ann.send(Resign())
        result = await ann.expect(Result)
        page = await ask(ann, Replay(result.race, "ann"))
        cy = await open_client(server, "cy")
        welcome_token = cy.frames[0].token
        room = await answer(cy, Ghost(result.race, "ann"))
        assert isinstance(room, Room)
        await cy.send(Start())
        await cy.expect(RaceMsg)
        await wait_for_live_race(server)
    async with running_server(db_url, tmp_path) as server:
        back = await open_client(server)
        await back.send(Hello(1, token=welcome_token))
        await back.expect(Welcome)
        again = await back.expect(Room)
        assert again.ghost == "ann" and again.state == "racing"
        await back.expect(RaceMsg)
        progress = await back.expect(Progress)
        assert progress.ghost is not None and progress.ghost.name == "ann"
        done = [a for a in page.actions if a[0] <= progress.elapsed_ms]
        assert progress.ghost.moves == len(done)
        await back.send(Resign())
        result = await back.expect(Result)
        assert result.ghost is not None and result.ghost.name == "ann"
        await back.ws.close()
