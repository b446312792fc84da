"""Players' contributions to the shuffle (issue 21): given events, when a contribution or a
deal, then events (or a refusal)."""

from __future__ import annotations

import pytest

from domain.commands import ContributeSeed, Deal
from domain.dealing import deal_from_seed
from domain.errors import AlreadyContributed, InvalidCommand, NotYourSeat, WrongPhase
from domain.events import HandDealt, SeedContributed
from domain.shuffle import mixed_seed
from tests.domain.given import STANDARD, created, given, seated


def test_a_seated_player_contributes_once_to_the_next_hand():
    story = seated()
    given(story).when(ContributeSeed(1, 1, "abc")).then(SeedContributed(1, 1, "abc"))
    twice = story.do(ContributeSeed(1, 1, "abc"))
    given(twice).when(ContributeSeed(1, 1, "def")).raises(AlreadyContributed)
    given(story).when(ContributeSeed(1, 2, "abc")).raises(WrongPhase, "hand 1")
    given(story).when(ContributeSeed(1, 1, "no spaces")).raises(InvalidCommand)
    given(story).when(ContributeSeed(1, 1, "x" * 65)).raises(InvalidCommand)


def test_a_bots_seat_does_not_contribute():
    story = created(STANDARD, (None, "random", "random", "random"))
    given(story).when(ContributeSeed(1, 1, "abc")).raises(NotYourSeat)


def test_the_deal_is_shuffled_by_the_seed_mixed_with_the_contributions_in_seat_order():
    story = seated().do(ContributeSeed(2, 1, "bob"), ContributeSeed(0, 1, "ann"))
    dealt = story.do(Deal("server-seed")).events[-1]
    assert isinstance(dealt, HandDealt)
    assert dealt.contributions == ((0, "ann"), (2, "bob"))
    hands, kitty = deal_from_seed(STANDARD, 0, mixed_seed("server-seed", dealt.contributions))
    assert dealt.hands == hands and dealt.seed == "server-seed"
    # Spent on hand 1: the next hand starts with none.
    assert story.do(Deal("server-seed")).state.contributions == ()


def test_without_contributions_the_servers_seed_deals_as_before():
    dealt = seated().do(Deal("s")).events[-1]
    assert dealt.contributions == () and dealt.hands == deal_from_seed(STANDARD, 0, "s")[0]


def test_the_mixed_seed_test_vector():
    assert mixed_seed("hearts") == "hearts"
    assert (
        mixed_seed("hearts", [(2, "bob"), (0, "ann")])
        == "fdf681b6c96007f33d6a8dd95ece10d8739a88523120a4f9efee0cb0b26e78c6"
    )


@pytest.mark.parametrize("text", ["a", "A-z_09", "f" * 64])
def test_contribution_texts(text):
    given(seated()).when(ContributeSeed(0, 1, text)).then(SeedContributed(1, 0, text))
