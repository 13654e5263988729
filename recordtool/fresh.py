"""Fresh interpreters for ``recordtool.parallel.map_shipped``: the standard library's ``spawn``
start method, with two faults of its POSIX launcher mended.

Why not ``multiprocessing.get_context("spawn")`` as it comes:

- **A worker that ends as it starts hangs the caller** (CPython gh-118981, mended in CPython in
  2025, not in the Pythons recordtool runs on: 3.10 to 3.13.0 launch the same way). The launcher
  writes what a new interpreter needs (how to prepare, then the pool's state, pickled: at
  100,000 entries megabytes, the ids of the record) into a pipe while it still holds the
  worker's end of that pipe itself; a worker that ends before it has read it all (killed for its
  memory, an import that fails, a script run again: below) leaves the caller writing for ever.
  Here the caller closes the worker's ends as soon as the worker is started, so that the write
  fails (BrokenPipeError), the worker is reaped, the pool counts as broken and its chunks are
  done in the caller (``recordtool.parallel``: failures cost nothing but time).
- **The caller's script runs again in each worker.** ``spawn`` imports the caller's ``__main__``
  (a script run as ``python script.py``) in every worker, so that what the script defines can be
  unpickled there. A script that calls recordtool without ``if __name__ == "__main__":`` then
  ran whole in each worker (a render of 100,000 entries into the caller's folder, while the
  caller waited on it, for ever with the first fault). A worker here runs recordtool's code
  only: its work is a function of a module, found by name, and anything of the caller's
  ``__main__`` it is sent does not unpickle there, so that chunk is done in the caller.

Only ``_Popen._launch`` differs from the standard library's (``multiprocessing.popen_spawn_posix``,
the same in 3.10 to 3.13): the preparation without the main module, and the worker's ends of the
pipes closed before writing. Windows keeps ``spawn`` as it comes (its launcher is another).
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import signal
import sys
from typing import Any


def context() -> Any:
    """The multiprocessing context whose processes are fresh interpreters started as above."""
    if sys.platform == "win32":  # pragma: no cover (not where the tests run)
        return multiprocessing.get_context("spawn")
    return _CONTEXT


if sys.platform != "win32":
    from multiprocessing import popen_spawn_posix, reduction, spawn, util
    from multiprocessing.context import SpawnContext, SpawnProcess, set_spawning_popen
    from multiprocessing.process import BaseProcess

    MAIN = ("init_main_from_path", "init_main_from_name")  # how ``spawn`` tells a worker to run ``__main__``

    class _Popen(popen_spawn_posix.Popen):
        _fds: list[int]  # (set by the standard library's ``__init__``: the descriptors the worker inherits)

        def _launch(self, process_obj: BaseProcess) -> None:
            from multiprocessing import resource_tracker

            tracker_fd = resource_tracker.getfd()  # (started by now: a descriptor)
            assert tracker_fd is not None
            self._fds.append(tracker_fd)
            prep_data = spawn.get_preparation_data(process_obj.name)
            for key in MAIN:  # recordtool's code only (the module's docstring)
                prep_data.pop(key, None)
            sent = io.BytesIO()
            set_spawning_popen(self)
            try:
                reduction.dump(prep_data, sent)
                reduction.dump(process_obj, sent)
            finally:
                set_spawning_popen(None)
            parent_r = parent_w = child_r = child_w = None
            try:
                parent_r, child_w = os.pipe()
                child_r, parent_w = os.pipe()
                command = spawn.get_command_line(tracker_fd=tracker_fd, pipe_handle=child_r)
                self._fds.extend([child_r, child_w])
                self.pid = util.spawnv_passfds(os.fsencode(spawn.get_executable()), command, self._fds)
                self.sentinel = parent_r
                os.close(child_r)  # the worker's now: should it end, the write below fails
                os.close(child_w)
                child_r = child_w = None
                try:
                    with open(parent_w, "wb", closefd=False) as pipe:
                        pipe.write(sent.getbuffer())
                except BrokenPipeError:  # it ended before reading it all: reaped, and the pool breaks
                    with contextlib.suppress(OSError):
                        os.kill(self.pid, signal.SIGKILL)
                        os.waitpid(self.pid, 0)
                    raise
            finally:
                self.finalizer = util.Finalize(self, util.close_fds,  # type: ignore[attr-defined]  # (not in typeshed)
                                               tuple(fd for fd in (parent_r, parent_w) if fd is not None))
                for fd in (child_r, child_w):
                    if fd is not None:
                        os.close(fd)

    class _Process(SpawnProcess):
        _start_method = "spawn"

        @staticmethod
        def _Popen(process_obj: BaseProcess) -> _Popen:  # (the standard library's name)
            return _Popen(process_obj)

    class _Context(SpawnContext):
        Process = _Process

    _CONTEXT = _Context()
