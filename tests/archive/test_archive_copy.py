"""``hearts archive backup DIR`` and ``restore DIR``: the archive copied with the service's own
store client, from a directory or S3 alike (the documented backup needed the ``aws`` CLI, which
nothing installs)."""

from __future__ import annotations

import json

import pytest

from service.cli import main
from service.store.archive_copy import backup, restore
from service.store.blobs import blob_store_from_url
from tests.blob_helpers import archive_url, make_blob_store

OBJECTS = {
    "games/p3/g1.zst": b"one",
    "games/p9/g2.zst": b"two" * 1000,
    "tile/0/000": bytes(range(256)) * 32,
    "checkpoint": b"log\n1\nroot\n",
}


@pytest.mark.parametrize("kind", ["disk", "s3"])
def test_a_backup_restored_into_an_empty_archive_holds_the_same_objects(request, kind, tmp_path):
    source = make_blob_store(request, kind, tmp_path / "source")
    for name, data in OBJECTS.items():
        if name == "checkpoint":  # the one object the service replaces
            source.replace(name, data)
        else:
            source.put(name, data)
    first = backup(source, tmp_path / "backup")
    assert (first.copied, first.skipped) == (4, 0)
    # Later: one more game, a newer checkpoint; the rest is not copied again.
    source.put("games/p1/g3.zst", b"three")
    source.replace("checkpoint", b"log\n2\nroot\n")
    second = backup(source, tmp_path / "backup")
    assert (second.copied, second.skipped) == (2, 3)  # the new game and the checkpoint

    target = make_blob_store(request, kind, tmp_path / "target")
    restored = restore(tmp_path / "backup", target)
    assert (restored.copied, restored.conflicts) == (5, ())
    assert sorted(target.names("")) == sorted(source.names(""))
    assert all(target.get(name) == source.get(name) for name in source.names(""))
    assert restore(tmp_path / "backup", target).skipped == 4  # again: a no-op (but checkpoint)


def test_a_restore_never_replaces_an_object_with_other_bytes(request, tmp_path):
    source = make_blob_store(request, "disk", tmp_path / "source")
    source.put("games/p3/g1.zst", b"one")
    backup(source, tmp_path / "backup")
    target = make_blob_store(request, "disk", tmp_path / "target")
    target.put("games/p3/g1.zst", b"another")
    assert restore(tmp_path / "backup", target).conflicts == ("games/p3/g1.zst",)
    assert target.get("games/p3/g1.zst") == b"another"


def test_the_cli_backs_up_and_restores_the_archive_of_its_url(
    request, tmp_path, monkeypatch, capsys
):
    url = archive_url(request, "s3", tmp_path)
    monkeypatch.setenv("HEARTS_ARCHIVE_URL", url)
    store = blob_store_from_url(url)
    store.put("games/p3/g1.zst", b"one")
    assert main(["archive", "backup", str(tmp_path / "backup")]) == 0
    assert json.loads(capsys.readouterr().out)["copied"] == 1
    assert (tmp_path / "backup" / "games" / "p3" / "g1.zst").read_bytes() == b"one"

    monkeypatch.setenv("HEARTS_ARCHIVE_URL", str(tmp_path / "restored"))
    assert main(["archive", "restore", str(tmp_path / "backup")]) == 0
    assert (tmp_path / "restored" / "games" / "p3" / "g1.zst").read_bytes() == b"one"
    assert main(["archive", "restore", str(tmp_path / "nothing")]) == 1
    assert "no backup directory" in capsys.readouterr().err
