"""bench.departures: a bot's plays against the heuristic's, from the same views."""

from __future__ import annotations

import json

from bench.departures import departures, main


def test_the_heuristic_departs_from_itself_never():
    result = departures("heuristic", hands=4, table="random")
    assert result["decisions"] > 0
    assert result["departures"] == 0
    assert all(not rows for rows in result["commonest"].values())
    assert all(row["named"] == row["departures"] == 0 for row in result["stray"].values())


def test_a_search_departs_somewhere_and_every_departure_is_counted_once(capsys):
    assert main(["--bot", "montecarlo:plays=400", "--hands", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    kinds = result["by_kind"].values()
    assert result["decisions"] == sum(row["decisions"] for row in kinds)
    assert 0 < result["departures"] == sum(row["departures"] for row in kinds)
    normal = sum(row["departures"] for kind, row in result["by_kind"].items() if "normal" in kind)
    described = sum(n for rows in result["commonest"].values() for _, n in rows)
    assert described <= normal  # only the commonest few of each kind are listed
    # Two one-hand games of four seats: 13 tricks at most with a choice, 48 plays at most.
    assert result["decisions"] <= 2 * 48


def test_the_departures_stray_card_names_are_departures_it_offered(capsys):
    assert main(["--bot", "montecarlo:plays=400", "--hands", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    stray = result["stray"]
    assert stray["discard"]["offered"] == stray["discard"]["named"] == 0  # no model of discards
    assert stray["lead"]["offered"] > 0
    for kind, row in stray.items():
        assert row["named"] <= min(row["departures"], row["offered"])
        assert row["departures"] == result["by_kind"].get(f"{kind} (normal)", {}).get(
            "departures", 0
        )


def test_asked_again_the_heuristic_plays_the_same_card_every_time():
    result = departures("heuristic", hands=2, table="random", again=True)
    rows = result["again"].values()
    assert sum(row["asked"] for row in rows) > 0
    assert all(row["same"] == 1.0 for row in rows if row["asked"])
    assert all(row["departures"] == 0 == row["repeated"] for row in rows)


def test_asked_again_a_search_is_counted_at_each_normal_play_with_a_choice(capsys):
    argv = ["--bot", "montecarlo:plays=400", "--hands", "2", "--again", "--json"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    again = result["again"]
    for kind, row in again.items():
        normal = result["by_kind"].get(f"{kind} (normal)", {"decisions": 0, "departures": 0})
        assert row["asked"] == normal["decisions"]
        assert row["departures"] == normal["departures"]
        assert 0.0 <= row["same"] <= 1.0 and 0.0 <= row["repeated"] <= 1.0
    # Without --again the figures say nothing of it.
    assert main(["--bot", "heuristic", "--hands", "1", "--json"]) == 0
    assert "again" not in json.loads(capsys.readouterr().out)
