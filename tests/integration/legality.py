"""Re-decide a game's log command by command: it must be exactly what the rules decide."""

from __future__ import annotations

from itertools import groupby

from domain.cards import Card
from domain.commands import (
    ChooseMoonScoring,
    CreateGame,
    Deal,
    JoinGame,
    PassCards,
    PlayCard,
    SetSeatBot,
)
from domain.decider import decide
from domain.events import event_from_dict
from domain.rules import MoonScoring, RuleOptions
from service.app.deal_plan import is_domain_event
from service.app.game import StoredGame, fold_records, new_event
from service.store.envelope import RecordedEvent


def command_of(event: RecordedEvent):
    p = event.payload
    return {
        "GameCreated": lambda: CreateGame(
            p["game_id"], RuleOptions.from_dict(p["rules"]), tuple(p["seats"])
        ),
        "PlayerJoined": lambda: JoinGame(p["name"], p["seat"], p["credential"]),
        "SeatControlChanged": lambda: SetSeatBot(p["seat"], p["bot"]),
        "CardsPassed": lambda: PassCards(p["seat"], tuple(Card(c) for c in p["cards"])),
        "CardPlayed": lambda: PlayCard(p["seat"], Card(p["card"])),
        "MoonScoringChosen": lambda: ChooseMoonScoring(p["seat"], MoonScoring(p["choice"])),
    }[event.type]()


def assert_legal_log(log: list[RecordedEvent]) -> list[tuple[str, int]]:
    """Every append re-decides to exactly its events; returns (command id, first seq) per append."""
    table = StoredGame()
    appends = []
    for command_id, group in groupby(log, key=lambda e: e.command_id):
        group = list(group)
        assert command_id not in {c for c, _ in appends}, f"{command_id} appended twice"
        appends.append((command_id, group[0].seq))
        domain = [e for e in group if is_domain_event(e.type)]
        expected = [new_event(e) for e in decide(command_of(domain[0]), table.state)]
        after = fold_records(table, [e for e in group if e.type == "DealPlan"])
        rest = domain[len(expected) :]
        if rest:  # the deal added to the same append
            dealt = event_from_dict("HandDealt", rest[0].payload)
            state = fold_records(after, domain[: len(expected)]).state
            hands = dealt.hands if dealt.explicit else None
            deal = Deal(dealt.seed, hands, dealt.kitty if dealt.explicit else None, dealt.salt)
            expected += [new_event(e) for e in decide(deal, state)]
        assert [(e.type, e.payload) for e in expected] == [(e.type, e.payload) for e in domain]
        table = fold_records(table, group)
    return appends
