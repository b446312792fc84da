"""The directory ``hearts serve``'s workers write their metrics files to (prometheus_client's
multiprocess mode), and what becomes of those a master left behind.

A master removes its own when it stops; one killed outright (SIGKILL, the OOM killer) never
gets there, and its directory (a file of ~64 KB a worker and metric kind) would stay in the
temporary directory for good. So each is named by its master's pid, and a master starting
removes those of masters no longer running: a crash costs its files until the next start.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from service.lifeline import running

PREFIX = "hearts-metrics-"


def make() -> str:
    """A new directory for this master's workers, the orphans of dead masters removed first."""
    remove_orphans(Path(tempfile.gettempdir()))
    return tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")


def remove_orphans(root: Path) -> list[Path]:
    """Remove the metrics directories in ``root`` of masters that no longer run; those removed.
    Only this user's own directories, never a link: the temporary directory is shared."""
    removed = []
    for path in root.glob(f"{PREFIX}*-*"):
        pid = path.name.removeprefix(PREFIX).split("-", 1)[0]
        if not pid.isdigit() or running(int(pid)):
            continue
        try:
            found = path.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid():
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed
