"""The event store and the read-model store: everything that talks to Redis."""
