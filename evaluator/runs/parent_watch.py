"""An evaluator started by a worker never outlives it.

The worker passes its process id in LEADERBOARD_PARENT_PID. On Linux the kernel then sends this process SIGKILL the
moment the worker (the thread that started it) dies, even by SIGKILL (prctl's parent-death signal); elsewhere a
watch thread checks the parent every second. Either way a worker that was already gone before the watch began is
noticed at once. Without the variable (the command line run by hand) nothing is watched.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading

PARENT_PID_ENV = "LEADERBOARD_PARENT_PID"
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
ORPHAN_EXIT_CODE = 75  # the worker that started this run is gone: nothing to report to


def _parent_death_signal() -> bool:
    """Ask Linux to SIGKILL this process when its parent dies; False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _poll(parent: int) -> None:
    while not threading.Event().wait(1.0):
        if os.getppid() != parent:
            os._exit(ORPHAN_EXIT_CODE)


def die_with_parent(environ: dict | None = None) -> None:
    """Tie this process's life to the worker named by LEADERBOARD_PARENT_PID (see the module docstring)."""
    value = (environ if environ is not None else os.environ).get(PARENT_PID_ENV, "")
    if not value.isdigit():
        return
    parent = int(value)
    if not _parent_death_signal():
        threading.Thread(target=_poll, args=(parent,), name="parent-watch", daemon=True).start()
    if os.getppid() != parent:  # the worker died before the watch began
        os._exit(ORPHAN_EXIT_CODE)
