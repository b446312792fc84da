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
