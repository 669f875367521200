"""Player verdicts when a decision, another judgement or an erasure comes between a
judgement's read and its write, on a real database file: the judgement gives way and is
made again from the row as it is; a case new solves raise after a clearing rests on them
alone; the history reads in the order things happened; erasing one player leaves the
others' notifications."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone

import pytest
from prometheus_client import CollectorRegistry

from fairgrid.daemon.metrics import Metrics
from fairgrid.daemon.store import Store, connect
from fairgrid.daemon.store.connection import in_transaction
from fairgrid.daemon.store.repository import lifecycle, organiser, outbox
from fairgrid.daemon.store.repository import players as sql
from fairgrid.daemon.work import verdicts
from fairgrid.daemon.work.nightly_db import NightlyDB, direct_db

from ..helpers import COLUMNS, INSERT_SCORE, make_settings

START = datetime(2026, 11, 1, 18, 0, tzinfo=timezone.utc)


def _evidence(odd: bool) -> str:
    """A scored solve's evidence: an odd one is all but certainly not a person's."""
    signals = [{"name": "order", "family": "order", "p": 0.4}]
    if odd:
        signals += [{"name": "deduction", "family": "deduction", "p": 1e-6},
                    {"name": "client_paste", "family": "client", "p": 1e-6}]
    return json.dumps({"signals": signals, "llr": {"stall_look": 3.4 if odd else 0.0},
                       "flagged": False, "p_value": 1e-5 if odd else 0.5, "timeline": []})


def _add(con, player: str, sids_odd: list[tuple[str, bool]], first_day: int = 0) -> None:
    key = con.execute("SELECT coalesce(max(sub_key) + 1, 0) FROM submissions").fetchone()[0]
    for k, (sid, odd) in enumerate(sids_odd):
        at = START + timedelta(days=first_day + k)
        # a puzzle each (a puzzle counts once in a season)
        con.execute(f"INSERT INTO submissions {COLUMNS} VALUES (?, 'demo', ?, ?, 't', ?, "
                    "?, ?, ?, ?, 1, 1, true, 'scored', '{}')",
                    [key + k, sid, f"w{key + k}", player, f"p-{sid}", at, at, at])
        con.execute(INSERT_SCORE + "('demo', ?, ?, 0, ?, false, ?)",
                    [sid, datetime.now(timezone.utc), 1e-5 if odd else 0.5, _evidence(odd)])


def _season(player: str, n: int, start: int = 0, every: int = 3) -> list[tuple[str, bool]]:
    """``n`` solves, one in ``every`` odd."""
    return [(f"{player}-{k}", k % every == 1) for k in range(start, start + n)]


def test_a_judgement_that_gave_way_is_made_again_and_a_new_case_rests_on_new_solves(
        tmp_path):
    """A person clears a flagged player while the nightly job's judgement of new solves
    is between its read and its write: that judgement gives way, and the stage judges
    the player again from the cleared row. The new solves flag the player by
    themselves, so the case is raised again, and it, its notification and its history
    rest on them alone; the history ends with the state the player is in."""
    con = connect(str(tmp_path / "v.duckdb"))
    con.execute("INSERT INTO notify_endpoints VALUES ('demo', 'http://127.0.0.1:9/h', 's', ?)",
                [START])
    db = direct_db(con)
    _add(con, "cheat", _season("cheat", 9))
    verdicts.judge_players(db, [("demo", "cheat")], 1e-3)
    assert db.read(sql.verdict, "demo", "cheat")["state"] == "flagged"
    _add(con, "cheat", _season("cheat", 6, start=9, every=2), first_day=9)
    judged_at = db.read(sql.verdict, "demo", "cheat")["judged_at"]
    decided = []

    def write(fn, *args):
        if fn is sql.save and not decided:   # the decision lands inside the judgement
            decided.append(in_transaction(con, sql.review, "demo", "cheat", "cleared",
                                          "seen it", "alice", datetime.now(timezone.utc),
                                          judged_at))
        return db.write(fn, *args)

    again: list = []
    verdicts.judge_players(NightlyDB(db.read, write), [("demo", "cheat")], 1e-3,
                           again=again)
    assert again == [("demo", "cheat")]
    assert db.read(sql.verdict, "demo", "cheat")["state"] == "cleared"

    summary = verdicts.nightly_stage(NightlyDB(db.read, write), alpha=1e-3)
    row = db.read(sql.verdict, "demo", "cheat")
    assert summary["players_flagged"] == 1 and row["state"] == "flagged"
    assert row["solves"] == 6            # cheat-9 .. cheat-14: the reviewer saw the rest
    seen = set(json.loads(row["reviewed_solves"]))
    assert seen == {f"cheat-{k}" for k in range(9)}
    case = json.loads(row["flagging_verdict"])
    assert not seen & {s for f in case["findings"] for s in f["solves"]}
    assert "leaving out the 9 a person cleared the player on" in case["rests_on"]
    events = con.execute("SELECT payload FROM outbox WHERE type = 'player.flagged' "
                         "ORDER BY created_at").fetchall()
    assert len(events) == 2
    assert json.loads(events[-1][0])["data"]["p_value"] == row["p_value"]
    history = db.read(sql.history, "demo", "cheat")
    assert [h[1] for h in history] == ["flagged", "cleared", "flagged"]
    assert history[-1][2] == "new solves since the review flag the player"


def test_a_judgement_dated_before_a_decision_it_read_is_listed_after_it(tmp_path):
    """A judgement takes its time before it reads; a decision dated after that time but
    made before the read is listed first, so the history ends with the state the player
    is in."""
    con = connect(str(tmp_path / "v.duckdb"))
    db = direct_db(con)
    _add(con, "p", _season("p", 9))
    verdicts.judge_players(db, [("demo", "p")], 1e-3)
    early = datetime.now(timezone.utc)
    _add(con, "p", _season("p", 6, start=9, every=2), first_day=9)
    in_transaction(con, sql.review, "demo", "p", "cleared", None, "alice",
                   early + timedelta(seconds=5))
    verdicts.judge_players(db, [("demo", "p")], 1e-3, now=early)
    history = db.read(sql.history, "demo", "p")
    assert [h[1] for h in history] == ["flagged", "cleared", "flagged"]
    assert history[-1][0] > history[-2][0]


async def _diluted_case(store, tmp_path):
    """A judge, and player d's case: flagged, then the evidence diluted (the season no
    longer flags them by itself) with one solve flag (id 1) still standing."""
    store.write(_add, "d", [("d-0", False), ("d-1", True), ("d-2", False),
                            ("d-3", True), ("d-4", False), ("d-5", True)]).result(30)
    judge = verdicts.Verdicts(store, make_settings(tmp_path), Metrics(CollectorRegistry()))
    await judge.judge([("demo", "d")])
    assert store.read(sql.verdict, "demo", "d")["state"] == "flagged"
    store.write(lambda con: con.execute(
        "UPDATE scores SET evidence = ?, season_facts = NULL, p_value = 0.5",
        [_evidence(False)])).result(30)
    store.write(lambda con: con.execute(
        "INSERT INTO flags (id, portal, submission_id, created_at, state, reasons) "
        "VALUES (1, 'demo', 'd-5', ?, 'open', '[]')", [START])).result(30)
    return judge


async def test_a_judgement_after_a_cleared_solve_flag_ends_the_case_though_another_came_first(
        tmp_path, monkeypatch):
    """A person clears the last standing solve flag of a player whose season no longer
    flags them; the nightly job judged the player after that judgement read, so its
    write gives way: it is made again at once, still as the judgement after a review,
    and the case ends."""
    store = Store(str(tmp_path / "v.duckdb"))
    try:
        judge = await _diluted_case(store, tmp_path)
        real, calls = verdicts.judge_players, []

        def interleaved(db, players, alpha, now=None, after_review=False, again=None):
            calls.append(after_review)
            if len(calls) == 1:     # the nightly job stores a verdict judged after this read
                now = datetime.now(timezone.utc)
                real(db, players, alpha)
            return real(db, players, alpha, now, after_review, again)
        monkeypatch.setattr(verdicts, "judge_players", interleaved)
        store.write(organiser.review, 1, "cleared", None, "alice",
                    datetime.now(timezone.utc)).result(30)
        await judge.after_flag_review([1], dismissed=[1])
        assert calls == [True, True]
        row = store.read(sql.verdict, "demo", "d")
        assert row["state"] == "clear"
        assert store.read(sql.history, "demo", "d")[-1][2].startswith("a solve flag cleared")
    finally:
        store.close()


def test_the_same_decision_again_changes_nothing(tmp_path):
    """A decision a player already has writes no history row, as a flag's; clearing
    again after solves the reviewer had not cleared remembers them, on the record."""
    con = connect(str(tmp_path / "v.duckdb"))
    db = direct_db(con)
    _add(con, "p", _season("p", 9))
    verdicts.judge_players(db, [("demo", "p")], 1e-3)
    now = datetime.now(timezone.utc)
    for k, state in enumerate(("confirmed", "confirmed", "open", "open")):
        in_transaction(con, sql.review, "demo", "p", state, None, "alice",
                       now + timedelta(seconds=k))
    assert [h[1] for h in db.read(sql.history, "demo", "p")] == [
        "flagged", "confirmed", "flagged"]
    in_transaction(con, sql.review, "demo", "p", "cleared", None, "alice",
                   now + timedelta(seconds=5))
    in_transaction(con, sql.review, "demo", "p", "cleared", None, "alice",
                   now + timedelta(seconds=6))
    assert len(db.read(sql.history, "demo", "p")) == 4
    _add(con, "p", [("p-9", False)], first_day=9)
    verdicts.judge_players(db, [("demo", "p")], 1e-3)
    in_transaction(con, sql.review, "demo", "p", "cleared", None, "alice",
                   now + timedelta(seconds=7))
    assert len(db.read(sql.history, "demo", "p")) == 5
    assert "p-9" in json.loads(db.read(sql.verdict, "demo", "p")["reviewed_solves"])
    # new solves flag the cleared player again; reopening that case brings the cleared
    # solves back into the verdict (its next judgement counts them all)
    _add(con, "p", _season("p", 6, start=10, every=2), first_day=10)
    verdicts.judge_players(db, [("demo", "p")], 1e-3)
    assert db.read(sql.verdict, "demo", "p")["state"] == "flagged"
    assert db.read(sql.verdict, "demo", "p")["solves"] == 6
    in_transaction(con, sql.review, "demo", "p", "open", None, "alice",
                   now + timedelta(minutes=1))
    assert db.read(sql.verdict, "demo", "p")["reviewed_solves"] is None
    assert len(db.read(sql.history, "demo", "p")) == 7
    verdicts.judge_players(db, [("demo", "p")], 1e-3)
    assert db.read(sql.verdict, "demo", "p")["solves"] == 16


def test_erasing_a_player_leaves_the_events_of_a_solve_named_like_them(tmp_path):
    """A player's events have the subject "player:" and their id; a solve may be named
    so too. Erasing the player deletes their events and their solves' only."""
    con = connect(str(tmp_path / "v.duckdb"))
    con.execute("INSERT INTO notify_endpoints VALUES ('demo', 'http://127.0.0.1:9/h', 's', ?)",
                [START])
    _add(con, "bob", _season("bob", 9))
    _add(con, "carol", [("player:bob", True)], first_day=20)
    con.execute("INSERT INTO flags (id, portal, submission_id, created_at, state, reasons) "
                "VALUES (1, 'demo', 'player:bob', ?, 'open', '[]')", [START])
    outbox.enqueue_flags_raised(con, [1], START)
    verdicts.judge_players(direct_db(con), [("demo", "bob")], 1e-3)

    def kinds():
        return sorted(con.execute("SELECT type, json_extract_string(payload, "
                                  "'$.data.player_id') FROM outbox").fetchall())
    assert kinds() == [("flag.raised", "carol"), ("player.flagged", "bob")]
    in_transaction(con, lifecycle.erase_player, "demo", "bob", "admin",
                   datetime.now(timezone.utc), "d" * 64)
    assert kinds() == [("flag.raised", "carol")]


def test_a_flag_decision_that_changes_nothing_says_so(tmp_path):
    """A decision a flag already has writes nothing, and the review says so: the
    player's case is not judged again as if a person had just dismissed a flag (which
    may end it)."""
    con = connect(str(tmp_path / "v.duckdb"))
    _add(con, "p", [("p-0", True), ("p-1", True)])
    con.execute("INSERT INTO flags (id, portal, submission_id, created_at, state, reasons) "
                "VALUES (1, 'demo', 'p-0', ?, 'open', '[]'), "
                "(2, 'demo', 'p-1', ?, 'cleared', '[]')", [START, START])
    now, changed = datetime.now(timezone.utc), []
    assert in_transaction(con, organiser.review_many, {1: None, 2: None}, "cleared", None,
                          "alice", now, None, changed) is None
    assert changed == [1]
    later, changed = now + timedelta(seconds=1), []
    in_transaction(con, organiser.review, 2, "cleared", None, "alice", later, None, None,
                   changed)
    assert changed == []
    in_transaction(con, organiser.review, 2, "open", None, "alice", later, None, None,
                   changed)
    assert changed == [2]


async def test_a_decision_on_many_flags_judges_each_player_once(tmp_path, monkeypatch):
    """A bulk decision on a player's many flags is one judgement of their season, not
    one per flag (a hundred flags of one player took seconds)."""
    store = Store(str(tmp_path / "v.duckdb"))
    try:
        store.write(_add, "p", _season("p", 9)).result(30)
        store.write(_add, "q", _season("q", 3), 20).result(30)
        store.write(lambda con: con.execute(
            "INSERT INTO flags (id, portal, submission_id, created_at, state, reasons) "
            "VALUES (1, 'demo', 'p-1', ?, 'open', '[]'), (2, 'demo', 'p-4', ?, 'open', "
            "'[]'), (3, 'demo', 'p-7', ?, 'open', '[]'), (4, 'demo', 'q-1', ?, 'open', "
            "'[]')", [START] * 4)).result(30)
        judge = verdicts.Verdicts(store, make_settings(tmp_path), Metrics(CollectorRegistry()))
        real, calls = verdicts.judge_players, []

        def counted(db, players, *args):
            calls.append(sorted(players))
            return real(db, players, *args)
        monkeypatch.setattr(verdicts, "judge_players", counted)
        await judge.after_flag_review([1, 2, 3, 4], dismissed=[])
        assert calls == [[("demo", "p"), ("demo", "q")]]
    finally:
        store.close()


async def test_a_verdict_dated_after_the_clock_is_not_judged_over_and_over(
        tmp_path, monkeypatch):
    """A stored verdict dated after the clock (the clock was set back) makes every
    judgement of the player give way to it, as to one that started later. After
    AGAIN_TRIES of them the player waits RETRY_S before being judged again, rather than
    being judged again at once, over and over, until the clock catches up."""
    store = Store(str(tmp_path / "v.duckdb"))
    try:
        store.write(_add, "p", _season("p", 9)).result(30)
        judge = verdicts.Verdicts(store, make_settings(tmp_path), Metrics(CollectorRegistry()))
        await judge.judge([("demo", "p")])
        store.write(lambda con: con.execute(
            "UPDATE player_verdicts SET judged_at = judged_at + INTERVAL 1 HOUR")).result(30)
        real, calls = verdicts.judge_players, []

        def counted(db, players, *args):
            calls.append(sorted(players))
            return real(db, players, *args)
        monkeypatch.setattr(verdicts, "judge_players", counted)
        later = []
        monkeypatch.setattr(asyncio.get_running_loop(), "call_later",
                            lambda delay, fn: later.append((delay, fn)))
        await judge._judge_now([("demo", "p")])
        assert len(calls) == verdicts.AGAIN_TRIES
        assert not judge._marked and judge._deferred == {("demo", "p")}
        assert [delay for delay, _ in later] == [verdicts.RETRY_S]
        later[0][1]()                          # RETRY_S later: marked again, and woken
        assert judge._marked == {("demo", "p")} and not judge._deferred
        assert judge._wake.is_set()
    finally:
        store.close()


@pytest.mark.parametrize("decided_meanwhile", [False, True])
async def test_a_deferred_judgement_after_a_cleared_flag_still_ends_the_case(
        tmp_path, monkeypatch, decided_meanwhile):
    """The judgement after a cleared flag gives way AGAIN_TRIES times (the nightly job
    judging beside it): the one made RETRY_S later is still the judgement after a
    review, and the case ends; unless a person decided on the case meanwhile (confirmed
    it, then reopened it on appeal): that case is theirs, and stays open."""
    store = Store(str(tmp_path / "v.duckdb"))
    judge = None
    try:
        judge = await _diluted_case(store, tmp_path)

        # the nightly job judges the player beside each of the first AGAIN_TRIES tries
        real, calls = verdicts.judge_players, []

        def interleaved(db, players, alpha, now=None, after_review=False, again=None):
            calls.append(after_review)
            if len(calls) <= verdicts.AGAIN_TRIES:
                now = datetime.now(timezone.utc)
                real(db, players, alpha)        # stored first, started later
            return real(db, players, alpha, now, after_review, again)
        monkeypatch.setattr(verdicts, "judge_players", interleaved)
        monkeypatch.setattr(verdicts, "RETRY_S", 0.3)   # "30 s later", sooner
        await judge.start()

        # a person clears the last standing solve flag
        store.write(organiser.review, 1, "cleared", None, "alice",
                    datetime.now(timezone.utc)).result(30)
        await judge.after_flag_review([1], dismissed=[1])
        assert calls == [True] * verdicts.AGAIN_TRIES
        if decided_meanwhile:   # as the review route does
            for state in ("confirmed", "open"):
                store.write(sql.review, "demo", "d", state, None, "bob",
                            datetime.now(timezone.utc)).result(30)
                judge.decided("demo", "d")
        deadline = asyncio.get_running_loop().time() + 20
        while len(calls) <= verdicts.AGAIN_TRIES:   # RETRY_S later, judged again
            assert asyncio.get_running_loop().time() < deadline, "never judged again"
            await asyncio.sleep(0.1)
        await judge.stop()
        judge = None
        row = store.read(sql.verdict, "demo", "d")
        if decided_meanwhile:
            assert calls[verdicts.AGAIN_TRIES] is False and row["state"] == "flagged"
            return
        assert row["state"] == "clear", (
            f"the judgement made RETRY_S later was not made as the "
            f"judgement after a review (after_review per call: {calls}); the case the "
            f"cleared flag ended stays {row['state']}")
    finally:
        if judge is not None:
            await judge.stop()
        store.close()


async def test_a_failed_judgement_after_a_cleared_flag_is_tried_again(tmp_path, monkeypatch):
    """The judgement after a cleared flag fails once (the database): it is made again
    RETRY_S later, as the judgement after a review, and the case ends."""
    store = Store(str(tmp_path / "v.duckdb"))
    judge = None
    try:
        judge = await _diluted_case(store, tmp_path)
        await judge.start()

        real, calls = verdicts.judge_players, []

        def flaky(db, players, alpha, now=None, after_review=False, again=None):
            calls.append(after_review)
            if len(calls) == 1:
                raise OSError("No space left on device (for a moment)")
            return real(db, players, alpha, now, after_review, again)
        monkeypatch.setattr(verdicts, "judge_players", flaky)
        monkeypatch.setattr(verdicts, "RETRY_S", 0.5)

        store.write(organiser.review, 1, "cleared", None, "alice",
                    datetime.now(timezone.utc)).result(30)
        await judge.after_flag_review([1], dismissed=[1])
        assert calls == [True]
        deadline = asyncio.get_running_loop().time() + 15
        while store.read(sql.verdict, "demo", "d")["state"] != "clear" \
                and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.2)
        row = store.read(sql.verdict, "demo", "d")
        assert row["state"] == "clear", (
            f"after one failed judgement the player was judged again {len(calls) - 1} "
            f"time(s) (after_review per call: {calls}); the case stays {row['state']}")
    finally:
        if judge is not None:
            await judge.stop()
        store.close()
