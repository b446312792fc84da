"""Signed heads and the public log of games (docs/verify.md): the log's key, checkpoints and
their cosignatures, inclusion and consistency proofs, the tree's tiles (c2sp.org/tlog-tiles),
and checking a head a player kept."""

from __future__ import annotations

from typing import Any

from flask import Response
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from service.api import long_work
from service.api.common import HEAD_DOC, head_headers, json_response, service, transparency
from service.api.problems import BODY, CATALOGUE, ProblemType, documented
from service.app.transparency import Chain, read_chain

blp = Blueprint(
    "log",
    __name__,
    url_prefix="",
    description="Signed game heads and the public log of finished games (docs/verify.md)",
)

for _problem in (
    ProblemType(
        "invalid-head",
        422,
        "Invalid head",
        "The head is not one this server signed for this game (malformed, another key, another "
        "game). Send the Hearts-Head header's value as it was received.",
    ),
    ProblemType(
        "head-not-extended",
        409,
        "Log does not extend the head",
        "The game's log no longer extends a head the server signed: events at or before 'seq' "
        "were rewritten or removed. 'expected_hash' is the head's, 'found_hash' the log's now.",
    ),
    ProblemType(
        "game-not-in-log",
        404,
        "Game not in the public log",
        "The game is not finished, or the projector has not appended it yet; retry shortly.",
    ),
    ProblemType(
        "tile-not-found",
        404,
        "Tile not found",
        "Not a tile of the public log (c2sp.org/tlog-tiles: tile/<L>/<N>[.p/<W>] or "
        "tile/entries/<N>[.p/<W>], N in 3-digit elements, all but the last prefixed 'x'), or a "
        "tile the log does not have yet: fetch tiles for the size of a checkpoint.",
    ),
    ProblemType(
        "bad-tree-size",
        400,
        "No such tree size",
        "A size larger than the public log, or a consistency proof from a larger size to a "
        "smaller.",
    ),
    ProblemType(
        "invalid-cosignature",
        422,
        "Invalid cosignature",
        "The note is not this log's checkpoint, or holds no valid cosignature of a witness "
        "the log is configured to know (HEARTS_LOG_WITNESSES).",
    ),
):
    CATALOGUE.setdefault(_problem.code, _problem)

TEXT = "text/plain"
STRING = {"type": "string"}
OCTETS = "application/octet-stream"
BINARY = {"type": "string", "format": "binary"}
# A tile within the checkpoint published last never changes (c2sp.org/tlog-tiles): any cache or
# CDN may keep it for good. One beyond it may still change if a failover loses its leaves.
IMMUTABLE = "public, max-age=31536000, immutable"
TILE_CACHE_DOC = {
    "Cache-Control": {
        "description": f"'{IMMUTABLE}' for a tile of the checkpoint published last, else "
        "'no-store'",
        "schema": {"type": "string"},
    }
}


def _text(body: str) -> Response:
    return Response(body, mimetype=TEXT)


class SizeQuerySchema(Schema):
    size = fields.Integer(
        load_default=None,
        validate=validate.Range(min=0),
        metadata={"description": "A tree size up to the current one (default: the current)"},
    )


class ConsistencyQuerySchema(Schema):
    old = fields.Integer(required=True, validate=validate.Range(min=0))
    new = fields.Integer(
        load_default=None, validate=validate.Range(min=0), metadata={"description": "Default: now"}
    )


class VerifyHeadSchema(Schema):
    head = fields.String(
        required=True,
        validate=validate.Length(min=1, max=4096),
        metadata={"description": "A Hearts-Head header's value, as received"},
    )


class HeadCheckSchema(Schema):
    game_id = fields.String()
    extends = fields.Boolean(metadata={"description": "Always true (else a problem)"})
    head_version = fields.Integer()
    version = fields.Integer(metadata={"description": "The game's version now"})
    blinded = fields.String(
        metadata={"description": "The chain hash at version, blinded with the game's salt"}
    )


class InclusionSchema(Schema):
    game_id = fields.String()
    index = fields.Integer(metadata={"description": "The game's leaf, from 0"})
    tree_size = fields.Integer()
    head = fields.String(metadata={"description": "The leaf's data: the game's final head text"})
    head_salt = fields.String(
        metadata={"description": "The game's salt: unblinds the heads given during the game"}
    )
    proof = fields.List(fields.String(), metadata={"description": "RFC 9162 path, base64"})
    checkpoint = fields.String(metadata={"description": "The signed checkpoint of tree_size"})


class ConsistencySchema(Schema):
    old_size = fields.Integer()
    new_size = fields.Integer()
    proof = fields.List(fields.String(), metadata={"description": "RFC 9162 proof, base64"})


class CosignSchema(Schema):
    checkpoint = fields.String(
        required=True,
        validate=validate.Length(min=1, max=65536),
        metadata={"description": "The checkpoint as served, with the witness's line added"},
    )


class CosignedSchema(Schema):
    kept = fields.List(fields.String(), metadata={"description": "The witnesses' names kept"})


@blp.route("/.well-known/hearts-log-key", methods=["GET"])
@blp.doc(operationId="getLogKey")
@blp.response(200, STRING, content_type=TEXT, description="The log's verifier key (C2SP vkey)")
@documented(blp)
def log_key():
    """The verifier key of heads and checkpoints: ``<origin>+<key id>+<base64 key>``."""
    return _text(transparency().vkey + "\n")


@blp.route("/api/v1/log/checkpoint", methods=["GET"])
@blp.doc(operationId="getCheckpoint")
@blp.arguments(SizeQuerySchema(), location="query")
@blp.response(200, STRING, content_type=TEXT, description="A C2SP checkpoint, signed and cosigned")
@documented(blp, 400, 422)
def checkpoint(query: dict[str, Any]):
    """The signed checkpoint of the public log (now, or at ``size``) with its cosignatures."""
    return _text(transparency().checkpoint(query["size"]))


@blp.route("/api/v1/log/checkpoint", methods=["POST"])
@blp.doc(operationId="cosignCheckpoint")
@blp.arguments(CosignSchema())
@blp.response(200, CosignedSchema)
@documented(blp, *BODY)
def cosign(body: dict[str, Any]):
    """A witness posts its cosignature: the checkpoint with its signature line added."""
    return json_response({"kept": transparency().add_cosignatures(body["checkpoint"])})


@blp.route("/api/v1/log/games/<game_id>", methods=["GET"])
@blp.doc(operationId="getInclusionProof")
@blp.arguments(SizeQuerySchema(), location="query")
@blp.response(200, InclusionSchema)
@documented(blp, 400, 404, 422)
def inclusion(query: dict[str, Any], game_id: str):
    """The game's leaf in the public log and its inclusion proof in the tree of ``size``."""
    return json_response(transparency().inclusion(game_id, query["size"]))


@blp.route("/api/v1/log/consistency", methods=["GET"])
@blp.doc(operationId="getConsistencyProof")
@blp.arguments(ConsistencyQuerySchema(), location="query")
@blp.response(200, ConsistencySchema)
@documented(blp, 400, 422)
def consistency(query: dict[str, Any]):
    """The proof that the tree of size ``new`` extends the tree of size ``old``."""
    return json_response(transparency().consistency(query["old"], query["new"]))


def _chain(game_id: str, head_version: int) -> Chain:
    """The game's log read and its chain verified for a head's check: in the worker if the log
    is a page at most (``HEARTS_LOG_PAGE``), else a long-work job (issue 33)."""
    if service().store.version(game_id) <= long_work.page():
        return read_chain(service().store, game_id, head_version)
    return long_work.work().chain(game_id, head_version)


@blp.route("/api/v1/log/tile/<path:tile>", methods=["GET"])
@blp.doc(operationId="getLogTile")
@blp.response(
    200,
    BINARY,
    content_type=OCTETS,
    headers=TILE_CACHE_DOC,
    description="A tile (concatenated 32-byte hashes) or an entry bundle (uint16-length-prefixed "
    "leaf data: the games' final heads)",
)
@documented(blp, 404)
def log_tile(tile: str):
    """The public log as tiles (c2sp.org/tlog-tiles, prefix ``/api/v1/log``):
    ``tile/<L>/<N>[.p/<W>]`` and ``tile/entries/<N>[.p/<W>]``; make any proof from them."""
    data, immutable = transparency().tile(f"tile/{tile}")
    response = Response(data, mimetype=OCTETS)
    response.headers["Cache-Control"] = IMMUTABLE if immutable else "no-store"
    return response


@blp.route("/api/v1/games/<game_id>/verify", methods=["POST"])
@blp.doc(operationId="verifyGameHead")
@blp.arguments(VerifyHeadSchema())
@blp.response(200, HeadCheckSchema, headers=HEAD_DOC)
@documented(blp, *BODY, 404, 409)
def verify_head(body: dict[str, Any], game_id: str):
    """Whether the game's log extends a head you kept (409 ``head-not-extended`` says where
    not)."""
    found = transparency().verify_head(game_id, body["head"], chain=_chain)
    headers = head_headers(game_id, found.version, found.chain_hash)
    return json_response(found.to_dict(), headers=headers)
