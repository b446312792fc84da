"""Read models folded from the event log: per-game scoreboards and player statistics.

Pure (imports the domain only): the projector in ``service/app/projector.py`` stores what these
folds produce. The log is the truth; every read model here can be thrown away and rebuilt.
"""
