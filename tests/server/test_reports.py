"""``report`` through a real server (docs/protocol.md 4.33): a player reports someone they
raced (a stored race, or the room they share now), the report joins the review queue with
the reporter, the race and the reason (control characters gone), ``yukon mod queue``
shows it beside flags; every refusal has its stable code; the budgets hold."""

from __future__ import annotations

from pathlib import Path

from protocol.messages import Error, Report, Reported, Resign, Result
from server.rooms.reports import REPORTS_PER_ADDRESS, REPORTS_PER_PLAYER
from server.storage.moderation import ModerationStore

from .wire import Client, open_client, room_with, running_server, start_race


async def ask(client: Client, report: Report) -> Reported | str:
    await client.send(report)
    while True:
        frame = await client.recv()
        if isinstance(frame, Reported):
            return frame
        if isinstance(frame, Error):
            return frame.code


async def raced(a: Client, b: Client) -> str:
    """A stored race of ``a`` and ``b``; its id."""
    await room_with(a, b)
    await start_race(a, b)
    await a.send(Resign())
    await b.send(Resign())
    result: Result = await a.expect(Result)
    assert result.race is not None
    return result.race


async def test_a_report_of_someone_raced_joins_the_queue(db_url: str, tmp_path: Path) -> None:
    async with running_server(db_url, tmp_path) as server:
        ann, bob = await open_client(server, "ann"), await open_client(server, "bob")
        cyd, dan = await open_client(server, "cyd"), await open_client(server, "dan")
        race = await raced(ann, bob)
        reason = "moves\x1b[31m every\n20 ms\u202e!"
        assert await ask(ann, Report("BOB", race=race, reason=reason)) == Reported("bob", race)
        # Without a race: their latest race together, already reported by ann.
        assert await ask(ann, Report("bob")) == "already_reported"
        assert await ask(bob, Report("ann")) == Reported("ann", race)
        # The room they share now, before any race of it is stored.
        room = await room_with(cyd, dan)
        assert await ask(cyd, Report("dan", reason="rude")) == Reported("dan", None)
        # The refusals, each with its code.
        assert await ask(cyd, Report("ann")) == "not_raced"
        assert await ask(cyd, Report("ann", race=race)) == "not_raced"
        assert await ask(cyd, Report("nobody")) == "unknown_player"
        assert await ask(dan, Report("ann", race="no-such-race")) == "no_such_race"
        assert await ask(dan, Report("Dan")) == "cannot_report_self"

        queue = await ModerationStore(server.store.engine).queue()
        reports = {(q.reporter, q.name): q for q in queue if q.kind == "report"}
        assert set(reports) == {("ann", "bob"), ("bob", "ann"), ("cyd", "dan")}
        first = reports[("ann", "bob")]
        assert first.race == race and first.note == "moves [31m every 20 ms !"
        assert reports[("cyd", "dan")].race is None
        assert reports[("cyd", "dan")].evidence == {"room": room.room}
        for c in (ann, bob, cyd, dan):
            await c.ws.close()


async def test_the_report_budgets_hold_per_player_and_per_address(
    db_url: str, tmp_path: Path
) -> None:
    async with running_server(db_url, tmp_path) as server:
        players = [
            await open_client(server, f"p{i}")
            for i in range(REPORTS_PER_ADDRESS // REPORTS_PER_PLAYER + 1)
        ]
        first = players[0]
        for _ in range(REPORTS_PER_PLAYER):  # refused ones count: probing costs as reporting
            assert await ask(first, Report("nobody")) == "unknown_player"
        assert await ask(first, Report("nobody")) == "too_many_reports"
        for p in players[1:-1]:
            answers = [await ask(p, Report("nobody")) for _ in range(REPORTS_PER_PLAYER)]
            assert answers == ["unknown_player"] * REPORTS_PER_PLAYER
        # Every test client is 127.0.0.1: the address's 20 are spent.
        assert await ask(players[-1], Report("nobody")) == "too_many_reports"
        for c in players:
            await c.ws.close()
