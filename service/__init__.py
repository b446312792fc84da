"""The Hearts service around the pure domain: store/ (Redis), app/ (use cases), api/ (HTTP), cli/.

See docs/architecture.md for the flow of a command and of a read through these packages.
"""
