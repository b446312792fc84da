"""The application layer: games, bots, replay, audit, export, projector. It speaks no HTTP."""
