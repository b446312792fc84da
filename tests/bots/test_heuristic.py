"""The heuristic's play in positions where sound play is clear."""

from __future__ import annotations

from bots.cardbits import card_of, mask_of
from bots.heuristic import choose_card, pass_cards, stray_card
from bots.simulation import PlayState, TableRules, legal_mask, table_rules
from domain.cards import DECK, parse_cards
from domain.rules import RuleOptions

STANDARD = table_rules(RuleOptions())
OMNIBUS = table_rules(RuleOptions.from_dict({"preset": "omnibus"}))
DIAMONDS = table_rules(RuleOptions.from_dict({"penalty_suit": "diamonds"}))


def m(text: str) -> int:
    return mask_of(parse_cards(text.split()))


def position(
    hand: str,
    trick: str = "",
    *,
    rules: TableRules = STANDARD,
    played: str = "",
    tricks_done: int = 3,
    broken: bool = True,
    penalty: list[int] | None = None,
) -> PlayState:
    """Seat 0 to play ``hand``; ``trick`` is the cards already played, from seat 4 - len on."""
    cards = parse_cards(trick.split())
    first = (4 - len(cards)) % 4
    plays = [((first + i) % 4, c.index) for i, c in enumerate(cards)]
    hands = [m(hand), 0, 0, 0]
    st = PlayState(
        rules,
        hands,
        trick=plays,
        turn=0,
        played=m(played) | m(trick),
        tricks_done=tricks_done,
        hearts_broken=broken,
        penalty=penalty,
    )
    return st


def chosen(st: PlayState) -> str:
    card = choose_card(st, 0, legal_mask(st, 0))
    return str(card_of(card))


def test_ducks_under_the_winning_card_with_its_highest_loser() -> None:
    assert chosen(position("5C 8C KC 2H", "3C 9C")) == "8C"  # a seat still to play
    assert chosen(position("5C 8C KC 2H", "3C 9C 4H")) == "8C"  # last, and the trick has a point


def test_last_on_a_clean_trick_it_sheds_its_highest_card() -> None:
    assert chosen(position("5C 8C KC 2H", "3C 9C 4C")) == "KC"


def test_dumps_the_queen_when_void() -> None:
    assert chosen(position("QS AH 2D 3D", "4C 9C")) == "QS"


def test_dumps_the_ace_of_spades_while_the_queen_is_out() -> None:
    assert chosen(position("AS 2S AH 2D", "4C 9C")) == "AS"
    # With the queen already played, the ace of spades is no danger: the high heart goes.
    assert chosen(position("AS 2S AH 2D", "4C 9C", played="QS 3S 4S 5S")) == "AH"


def test_plays_the_queen_under_the_king_of_spades() -> None:
    assert chosen(position("QS 3S 2D", "KS 5S")) == "QS"


def test_passes_an_unguarded_queen_and_empties_a_short_suit() -> None:
    hand = m("QS 3S 2C 9C 4D 6D 7D 8D 2H 3H 4H 5H 6H")
    passed = {str(card_of(c)) for c in pass_cards(hand, STANDARD, 3)}
    assert "QS" in passed and {"2C", "9C"} <= passed


def test_keeps_the_omnibus_bonus_card() -> None:
    hand = m("JD 2C 9C KC 4D 6D 7D 8D 2H 3H 4H 5H 6H")
    passed = {str(card_of(c)) for c in pass_cards(hand, OMNIBUS, 3)}
    assert "JD" not in passed


def test_last_to_play_it_takes_the_bonus_card() -> None:
    st = position("AD 3D 2C", "JD 5D 9D", rules=OMNIBUS)
    assert chosen(st) == "AD"


def test_with_diamonds_as_penalty_it_dumps_diamonds_not_hearts() -> None:
    assert chosen(position("KD 2H AH 3S", "4C 9C", rules=DIAMONDS)) == "KD"


def test_blocks_a_moon_by_dumping_on_anyone_but_the_shooter() -> None:
    penalty = [0, 20, 0, 0]  # seat 1 has every point so far, late in the hand
    # Seat 3 is winning (AC after seat 2's 5C): a heart goes to them.
    assert chosen(position("2H 9D", "5C AC", penalty=penalty, tricks_done=9)) == "2H"
    # Seat 1, the shooter, is winning: no heart for them.
    assert chosen(position("2H 9D", "AC 5C 4C", penalty=penalty, tricks_done=9)) == "9D"
    # Without a moon on, the heart goes either way.
    assert chosen(position("2H 9D", "AC 5C 4C", penalty=[0, 20, 3, 0], tricks_done=9)) == "2H"


def test_shooting_it_takes_the_trick_it_would_otherwise_duck() -> None:
    hand, out, trick = "AH KH 3H", "4H 6H 7H 8H 9H TH JH", "5H 2H"
    unplayed = set(f"{hand} {out} {trick}".split())
    played = " ".join(c for c in DECK if c not in unplayed)
    st = position(hand, trick, played=played, tricks_done=10, penalty=[13, 0, 0, 0])
    assert chosen(st) == "AH"  # every point so far is ours and only the 3H can lose
    st = position(hand, trick, played=played, tricks_done=10, penalty=[12, 1, 0, 0])
    assert chosen(st) == "3H"  # the moon is gone: duck


def test_a_bold_seat_goes_for_the_moon_with_more_cards_that_could_lose() -> None:
    # Every point so far is ours (4, under half the moon): the heuristic shoots only with no
    # card that could lose; this hand has two (the 3H and 4H under the unseen 5H-JH).
    hand, out, trick = "AH 3H 4H", "5H 6H 7H 8H 9H TH JH", "2H KH"
    unplayed = set(f"{hand} {out} {trick}".split())
    played = " ".join(c for c in DECK if c not in unplayed)
    st = position(hand, trick, played=played, tricks_done=10, penalty=[4, 0, 0, 0])
    assert chosen(st) == "4H"  # under the king: duck
    bold = [str(card_of(choose_card(st, 0, legal_mask(st, 0), bold=b))) for b in (1, 2)]
    assert bold == ["4H", "AH"]  # two more losers allowed: it takes the trick to shoot


def strayed(st: PlayState) -> tuple[str, str | None]:
    """The heuristic's card and the one a searching player most often plays instead."""
    legal = legal_mask(st, 0)
    card = choose_card(st, 0, legal)
    other = stray_card(st, 0, legal, card)
    return str(card_of(card)), str(card_of(other)) if other >= 0 else None


def test_a_stray_follow_to_a_clean_trick_takes_it_where_the_heuristic_ducks() -> None:
    assert strayed(position("5C 8C KC 2H", "3C 9C")) == ("8C", "KC")  # second or third: take
    assert strayed(position("5C 8C KC 2H", "3C 9C 4C")) == ("KC", "8C")  # last: duck


def test_a_trick_with_points_or_the_queen_out_is_never_strayed_on() -> None:
    assert strayed(position("5C 8C KC 2H", "3C 9C 4H")) == ("8C", None)  # a heart on it
    assert strayed(position("2S 9S KS 2D", "5S 8S")) == ("2S", None)  # spades, the queen out
    assert strayed(position("QS AH 2D 3D", "4C 9C")) == ("QS", None)  # a discard


def test_a_stray_lead_is_the_heuristics_next_cheapest() -> None:
    assert strayed(position("2C 9D KD")) == ("2C", "9D")
    assert strayed(position("4C 7D 9S")) == ("9S", "4C")
    assert strayed(position("2C 3C")) == ("3C", None)  # both sure to lose: one choice


def test_a_spread_stray_lead_is_the_kth_next_cheapest_at_odds_spread_to_the_k() -> None:
    st = position("4C 7D 9S 5H")  # cheapest first: 9S (the heuristic's), 4C, 7D, 5H
    legal = legal_mask(st, 0)
    card = choose_card(st, 0, legal)
    # Odds 1 : 0.5 : 0.25 of 1.75 for 4C, 7D, 5H: a uniform draw below 4/7 is the 4C, ...
    picks = [stray_card(st, 0, legal, card, spread=0.5, draw=d) for d in (0.0, 0.56, 0.58, 0.99)]
    assert [str(card_of(c)) for c in picks] == ["4C", "4C", "7D", "5H"]
