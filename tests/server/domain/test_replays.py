"""Replays and post-mortems: the hub's limits on a fake clock, then real servers.

The end-to-end tests race on a real server (SQLite and PostgreSQL), then ask for the runs
over the websocket and over HTTP: a replay reproduces every position a runner saw and
the final score, a post-mortem names the move that threw a won deal away, and nothing of
a running race or of today's daily deal is served before its time.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from protocol import Game
from protocol.messages import (
    MAX_REPLAY_PAGE,
    Accepted,
    Board,
    BoardPage,
    Daily,
    DailyDeal,
    Error,
    History,
    HistoryPage,
    MoveMsg,
    PostMortem,
    PostMortemAnswer,
    Race,
    Replay,
    ReplayPage,
    Resign,
    Result,
    Undo,
    Undone,
)
from server.domain.daily import code_public_at
from server.domain.records import PlayerResult, RaceRecord
from server.rooms.effects import Examine, Query
from server.rooms.postmortems import QUEUE_LIMIT
from server.runtime.solving import Lane
from solver import solve

from ..pages.test_http import MIDNIGHT, TODAY, Clock, fetch
from ..test_rooms import Clients, error_codes, to
from ..wire import (
    Client,
    kill_workers,
    open_client,
    room_with,
    running_server,
    start_race,
    winning_line,
)

#: A deal, and the move that throws it away after 13 moves of the solver's line
#: (tests/solver/test_postmortem.py): from there no win is left.
DEAL = "YU1-C-AAAAAAB"
LOSING_AFTER = 13
LOSING_MOVE = "TS>4"
BUDGET = 100_000


def solver_line() -> tuple[str, ...]:
    solution = solve(Game.from_code(DEAL), budget_nodes=BUDGET)
    assert solution.verdict == "won"
    return solution.moves


# -- the hub: one post-mortem per connection, a bound for the server ------------------------------


def examines(effects: list[Any]) -> list[Examine]:
    return [e for e in effects if isinstance(e, Examine)]


def test_one_postmortem_per_connection_and_a_bound_for_the_server() -> None:
    cl = Clients()
    ann = cl.hello("ann")
    ask = PostMortem("boot-1", "ann")
    [job] = examines(cl.send(ann, ask))
    assert (job.conn, job.message) == (ann, ask)
    again = cl.send(ann, ask)
    assert error_codes(again, ann) == ["too_many_queries"] and not examines(again)
    answer = PostMortemAnswer(
        "boot-1", "ann", "open", None, None, None, ("6H>7",), None, None, (), 0, 1
    )
    assert to(cl._record(cl.hub.postmortem_answered(ann, answer, cl.now)), ann) == [answer]
    assert examines(cl.send(ann, ask))  # answered: it may ask again
    others = [cl.hello(f"p{i}") for i in range(QUEUE_LIMIT - 1)]
    for conn in others:
        assert examines(cl.send(conn, ask))
    late = cl.hello("late")
    refused = cl.send(late, ask)
    assert error_codes(refused, late) == ["unavailable"] and not examines(refused)
    # An answer for a connection that has gone is dropped; its place is freed.
    cl.disconnect(others[0])
    assert cl._record(cl.hub.postmortem_answered(others[0], answer, cl.now)) == []
    assert examines(cl.send(late, ask))


def test_a_replay_is_a_query_like_a_board() -> None:
    cl = Clients()
    ann = cl.hello("ann")
    ask = Replay("boot-1", "bob", offset=3)
    effects = cl.send(ann, ask)
    assert [e.message for e in effects if isinstance(e, Query)] == [ask]
    cl.send(ann, History())
    assert error_codes(cl.send(ann, ask), ann) == ["too_many_queries"]


# -- a real server ---------------------------------------------------------------------------


async def ask(client: Client, message: Any) -> Any:
    """Send a request; its answer (the next reply or error that is not a progress)."""
    await client.send(message)
    while True:
        reply = await client.recv()
        if isinstance(reply, (ReplayPage, PostMortemAnswer, Error)):
            return reply


def replayed(code: str, actions: tuple[tuple[int, str], ...]) -> Game:
    game = Game.from_code(code)
    for _, action in actions:
        if action == "undo":
            game.undo()
        else:
            game.play(action)
    return game


async def test_a_replay_reproduces_every_position_and_the_score(
    db_url: str, tmp_path: Path
) -> None:
    code, winning = winning_line()
    line = solver_line()
    async with running_server(db_url, tmp_path) as server:
        ann, bob = await open_client(server, "ann"), await open_client(server, "bob")
        await room_with(ann, bob, code=code)
        [race, _] = await start_race(ann, bob)
        # ann follows the solver's line, throws the deal away, tries a move, takes it back
        # and resigns; bob wins.
        views = [race.view]
        answers: list[Accepted | Undone] = []
        view = Game.from_position(race.view)
        lost = Game.from_code(DEAL)
        for move in line[:LOSING_AFTER]:
            lost.play(move)
        lost.play(LOSING_MOVE)
        plan = [*line[:LOSING_AFTER], LOSING_MOVE, lost.legal_moves()[0], "undo"]
        for seq, action in enumerate(plan, start=1):
            await ann.send(Undo(seq) if action == "undo" else MoveMsg(seq, action))
            reply = await ann.expect(Undone if action == "undo" else Accepted, seq=seq)
            answers.append(reply)
            if isinstance(reply, Undone):
                view = Game.from_position(reply.view)
            else:
                view.play(reply.move, reveal=reply.turned)
            views.append(view.view())
        await ann.send(Resign())
        for seq, move in enumerate(winning, start=1):
            await bob.send(MoveMsg(seq, move))
        result: Result = await ann.expect(Result)
        assert result.race is not None
        ranks = {r.name: r for r in result.ranks}

        # The replay, page by page as a client reads it: every position ann saw, every
        # score and the final figures of the result.
        page = await ask(ann, Replay(result.race, "ANN"))
        assert isinstance(page, ReplayPage)
        assert (page.race, page.player, page.code, page.rules) == (result.race, "ann", DEAL, "C")
        assert (page.total, page.offset, page.players) == (len(plan), 0, ("bob", "ann"))
        assert [a for _, a in page.actions] == plan
        assert [ms for ms, _ in page.actions] == [a.elapsed_ms for a in answers]
        game = Game.from_code(page.code)
        assert game.view() == views[0]
        for (_, action), seen, answer in zip(page.actions, views[1:], answers, strict=True):
            if action == "undo":
                game.undo()
            else:
                game.play(action)
            assert game.view() == seen
            assert (game.score, game.cards_on_foundations) == (answer.score, answer.foundations)
        mine = ranks["ann"]
        assert (page.outcome, page.rank, page.moves, page.undos) == (
            "resigned",
            mine.rank,
            len(plan) - 1,
            1,
        )
        assert (game.score, game.cards_on_foundations) == (mine.score, mine.foundations)
        assert (page.score, page.foundations) == (mine.score, mine.foundations)
        theirs = await ask(ann, Replay(result.race, "bob"))
        won = replayed(DEAL, theirs.actions)
        assert won.is_won() and won.score == ranks["bob"].score == theirs.score
        later = await ask(bob, Replay(result.race, "bob", offset=len(winning) - 2))
        assert (later.offset, later.total) == (len(winning) - 2, len(winning))
        assert later.actions == theirs.actions[-2:]

        # The post-mortem names the move that threw the deal away, and a line from before.
        pm = await ask(bob, PostMortem(result.race, "ann"))
        assert isinstance(pm, PostMortemAnswer)
        assert (pm.status, pm.last_winnable, pm.losing_move) == ("lost", LOSING_AFTER, LOSING_MOVE)
        before = replayed(DEAL, page.actions[:LOSING_AFTER])
        for move in pm.line:
            before.play(move)
        assert before.is_won() and pm.budget == server.hub.config.hint_budget_nodes
        computed = server.replays.computed
        assert await ask(ann, PostMortem(result.race, "ann")) == pm  # from the cache
        assert server.replays.computed == computed
        bobs = await ask(ann, PostMortem(result.race, "bob"))
        assert bobs.status == "won" and bobs.kept is not None and bobs.par is not None
        assert bobs.wasted_total == len(winning) - bobs.kept == len(bobs.wasted)

        # Results, history and boards name the race.
        await ann.send(History())
        assert [r.race for r in (await ann.expect(HistoryPage)).rows] == [result.race]
        await ann.send(Board("deal", code=code))
        assert {r.race for r in (await ann.expect(BoardPage)).rows} == {result.race}

        # Refusals, each with its stable code.
        assert (await ask(ann, Replay(result.race, "cy"))).code == "no_such_player"
        assert (await ask(ann, Replay("nope-1", "ann"))).code == "no_such_race"
        assert (await ask(ann, PostMortem("nope-1", "ann"))).code == "no_such_race"

        # Over HTTP: the same run as JSON, every action in one answer.
        reply = await fetch(server, f"/replay/{result.race}/ann?format=json")
        assert reply.status == 200 and reply.headers["content-type"].startswith("application/json")
        data = reply.json()
        assert data["actions"] == [list(a) for a in page.actions]
        assert (data["code"], data["score"], data["total"]) == (DEAL, mine.score, len(plan))
        reply = await fetch(server, f"/replay/{result.race}/ann/postmortem?format=json")
        assert reply.json()["losing_move"] == LOSING_MOVE
        assert reply.json()["last_winnable"] == LOSING_AFTER
        missing = await fetch(server, f"/replay/{result.race}/cy?format=json")
        assert (missing.status, missing.json()["error"]) == (404, "no_such_player")
        assert (await fetch(server, "/replay/nope-1/ann?format=json")).status == 404
        # Without ?format=json: the browser client's page, which plays the run (a link a
        # player shares); the post-mortem is only JSON.
        page_reply = await fetch(server, f"/replay/{result.race}/ann")
        assert page_reply.status == 200
        assert page_reply.headers["content-type"].startswith("text/html")
        assert page_reply.headers["cache-control"] == "no-cache"
        assert "script-src 'self'" in page_reply.headers["content-security-policy"]
        assert 'src="../../static/' in page_reply.text
        assert (await fetch(server, f"/replay/{result.race}/ann/postmortem")).status == 404
        assert (await fetch(server, f"/replay/{result.race}/%ff?format=json")).status == 404
        for c in (ann, bob):
            await c.ws.close()


async def test_a_long_run_comes_in_pages(db_url: str, tmp_path: Path) -> None:
    """A run longer than a page (stored as a race would be): the first page holds
    MAX_REPLAY_PAGE actions, the next the rest, and past the end there are none."""
    first = Game.from_code(DEAL).legal_moves()[0]
    total = MAX_REPLAY_PAGE + 21
    actions = tuple((100 * n, first if n % 2 else "undo") for n in range(1, total + 1))
    async with running_server(db_url, tmp_path) as server:
        zed = await server.store.register_player(name="zed", now=MIDNIGHT)
        run = PlayerResult(
            zed.player_id, "zed", 1, "resigned", 60_000, 261, 0, 0, 260, False, actions
        )
        await server.store.record_race(
            RaceRecord("paged-1", 1, "ZEBRA", DEAL, "C", None, MIDNIGHT, MIDNIGHT + 60, (run,))
        )
        ann = await open_client(server, "ann")
        page = await ask(ann, Replay("paged-1", "zed"))
        assert (page.total, page.actions) == (total, actions[:MAX_REPLAY_PAGE])
        rest = await ask(ann, Replay("paged-1", "zed", offset=MAX_REPLAY_PAGE))
        assert (rest.offset, rest.actions) == (MAX_REPLAY_PAGE, actions[MAX_REPLAY_PAGE:])
        past = await ask(ann, Replay("paged-1", "zed", offset=total + 5))
        assert (past.offset, past.actions) == (total, ())
        await ann.ws.close()


async def wait_for_live_race(server: Any) -> str:
    """The id of the race the server has journaled as running (within its 50 ms)."""
    for _ in range(200):
        live = await server.store.live_races()
        if live:
            uid: str = live[0][0].uid
            return uid
        await asyncio.sleep(0.02)
    raise AssertionError("the race was never journaled")


async def test_nothing_of_a_running_race_is_served(db_url: str, tmp_path: Path) -> None:
    async with running_server(db_url, tmp_path) as server:
        ann, bob = await open_client(server, "ann"), await open_client(server, "bob")
        await room_with(ann, bob, rules="C")  # a deal drawn in secret
        await start_race(ann, bob)
        await ann.send(Resign())  # ann is done, bob races on
        race = await wait_for_live_race(server)
        for who in ("ann", "bob"):
            for message in (Replay(race, who), PostMortem(race, who)):
                answer = await ask(ann, message)
                assert isinstance(answer, Error) and answer.code == "race_running", answer
            for path in (
                f"/replay/{race}/{who}?format=json",
                f"/replay/{race}/{who}/postmortem?format=json",
            ):
                reply = await fetch(server, path)
                assert (reply.status, reply.json()["error"]) == (409, "race_running")
        await bob.send(Resign())
        result = await ann.expect(Result)
        assert result.race == race and result.code is not None  # now it is over: shown
        page = await ask(ann, Replay(race, "bob"))
        assert isinstance(page, ReplayPage) and page.code == result.code
        for c in (ann, bob):
            await c.ws.close()


async def test_today_s_daily_is_served_only_once_its_code_is_public(
    db_url: str, tmp_path: Path
) -> None:
    clock = Clock(MIDNIGHT - 3600)
    async with running_server(db_url, tmp_path, wall_clock=clock) as server:
        ann = await open_client(server, "ann")
        await ann.send(Daily())
        deal = await ann.expect(DailyDeal)
        assert deal.date == TODAY.isoformat()
        await ann.expect(Race)
        code = str((await server.boards.dailies.get(TODAY)).code)
        move = Game.from_code(code).legal_moves()[0]
        await ann.send(MoveMsg(1, move))
        await ann.expect(Accepted, seq=1)
        await ann.send(Resign())
        result = await ann.expect(Result)
        assert result.code is None and result.race is not None
        await ann.send(Board("daily", date=TODAY.isoformat()))
        assert [r.race for r in (await ann.expect(BoardPage)).rows] == [result.race]
        paths = (
            f"/replay/{result.race}/ann?format=json",
            f"/replay/{result.race}/ann/postmortem?format=json",
        )
        for at in (MIDNIGHT - 3600, MIDNIGHT + 1, code_public_at(TODAY) - 1):
            clock.now = at
            for message in (Replay(result.race, "ann"), PostMortem(result.race, "ann")):
                answer = await ask(ann, message)
                assert isinstance(answer, Error) and answer.code == "not_public", answer
                assert code not in answer.text
            for path in paths:
                reply = await fetch(server, path)
                assert (reply.status, reply.json()["error"]) == (403, "not_public")
                assert code not in reply.text
        assert server.replays.computed == 0  # the solver never looked at it
        clock.now = code_public_at(TODAY)  # 00:35 the next day: the day is over
        page = await ask(ann, Replay(result.race, "ann"))
        assert isinstance(page, ReplayPage)
        assert (page.code, page.date, page.actions[0][1]) == (code, TODAY.isoformat(), move)
        pm = await ask(ann, PostMortem(result.race, "ann"))
        assert isinstance(pm, PostMortemAnswer) and pm.status in ("open", "lost", "unknown")
        assert (await fetch(server, paths[0])).json()["code"] == code
        await ann.ws.close()


async def test_a_stored_result_replays_to_its_figures_on_every_run(
    db_url: str, tmp_path: Path
) -> None:
    """Every stored result of a real race, replayed from its replay_page, ends with the
    stored score, foundations and move count (the check ``stored_results`` was made for)."""
    code, winning = winning_line()
    async with running_server(db_url, tmp_path) as server:
        ann, bob = await open_client(server, "ann"), await open_client(server, "bob")
        await room_with(ann, bob, code=code)
        await start_race(ann, bob)
        for seq, move in enumerate(winning[:30], start=1):
            await ann.send(MoveMsg(seq, move))
        await ann.send(Undo(31))
        await ann.expect(Undone, seq=31)
        await ann.send(Resign())
        for seq, move in enumerate(winning, start=1):
            await bob.send(MoveMsg(seq, move))
        result = await ann.expect(Result)
        for rank in result.ranks:
            page = await ask(ann, Replay(result.race, rank.name))
            game = replayed(page.code, page.actions)
            assert (game.score, game.cards_on_foundations, game.move_count) == (
                rank.score,
                rank.foundations,
                rank.moves,
            )
        for c in (ann, bob):
            await c.ws.close()


async def test_a_dead_solver_process_is_unavailable_then_replaced(
    db_url: str, tmp_path: Path
) -> None:
    """The post-mortem's worker dies: that answer is ``unavailable`` (nothing cached),
    the next one starts a new process; bad addresses over HTTP are plain 404s."""
    async with running_server(db_url, tmp_path) as server:
        ann, bob = await open_client(server, "ann"), await open_client(server, "bob")
        await room_with(ann, bob, code=DEAL)
        await start_race(ann, bob)
        await ann.send(MoveMsg(1, Game.from_code(DEAL).legal_moves()[0]))
        await ann.expect(Accepted, seq=1)
        for c in (ann, bob):
            await c.send(Resign())
        result = await ann.expect(Result)
        assert (await ask(ann, PostMortem(result.race, "ann"))).status == "open"
        pool = server.solver.current(Lane.POSTMORTEM)
        assert pool is not None
        await kill_workers(pool)
        failed = await ask(ann, PostMortem(result.race, "bob"))
        assert isinstance(failed, Error) and failed.code == "unavailable"
        answer = await ask(ann, PostMortem(result.race, "bob"))
        assert isinstance(answer, PostMortemAnswer) and answer.status == "open"
        assert (
            server.solver.current(Lane.POSTMORTEM) is not None
            and server.solver.current(Lane.POSTMORTEM) is not pool
        )
        for path in (
            "/replay/",
            f"/replay/{result.race}?format=json",
            f"/replay/{result.race}/ann/moves?format=json",
            f"/replay/{result.race}/ann/postmortem/more?format=json",
            f"/replay/{'r' * 41}/ann?format=json",
        ):
            reply = await fetch(server, path)
            assert reply.status == 404, (path, reply.text)
            assert "Traceback" not in reply.text
        assert (await fetch(server, f"/replay/{result.race}/ann", "POST")).status == 405
        for c in (ann, bob):
            await c.ws.close()
