"""Tournaments as event-sourced logs: pure rules, no I/O (docs/tournaments.md).

``events`` (what happened), ``commands`` (what is asked), ``decider`` (``decide`` /
``evolve`` / ``fold``, as ``domain.decider`` is for a game), ``movement`` (who sits where in
each round) and ``matchpoints`` (the duplicate score and the standings)."""
