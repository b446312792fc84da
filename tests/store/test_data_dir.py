"""The default data directory: the user's, the same from any working directory (issue 18)."""

from __future__ import annotations

import pytest

from service.settings import Settings, data_directory


@pytest.fixture
def user_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "hearts"


def test_the_default_is_the_users_data_directory_from_any_working_directory(
    user_dirs, tmp_path, monkeypatch
):
    assert Settings().data_dir is None
    chosen = set()
    for cwd in (tmp_path, tmp_path / "home"):
        cwd.mkdir(exist_ok=True)
        monkeypatch.chdir(cwd)
        path, note = data_directory(None)
        assert note is None
        chosen.add(path)
    assert chosen == {user_dirs}


def test_a_configured_directory_wins(user_dirs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert data_directory("elsewhere") == ((tmp_path / "elsewhere").resolve(), None)
    assert Settings.from_env({"HEARTS_DATA_DIR": "/srv/hearts"}).data_dir == "/srv/hearts"


def test_an_earlier_versions_dot_hearts_with_data_is_used_and_the_note_says_how_to_move_it(
    user_dirs, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    legacy = tmp_path / ".hearts"
    (legacy / "appendonlydir").mkdir(parents=True)
    path, note = data_directory(None)
    assert path == legacy
    assert note is not None and f"mv {legacy} {user_dirs}" in note
    # Once the default holds data, it wins, and the note says the old one is left alone.
    (user_dirs / "appendonlydir").mkdir(parents=True)
    path, note = data_directory(None)
    assert path == user_dirs
    assert note is not None and f"--data-dir {legacy}" in note
