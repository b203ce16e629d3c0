"""The garbage collector paused while a trace is read: the reading makes millions of small
objects, none of them garbage, and each collection pass walks them all (about 0.1 s of a 2 s
first open at 1M events, 4-5%)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _Pauses:
    """Pauses that may overlap (the viewer reads two traces at once to compare them): the
    collector is off from the first one's start to the last one's end, then as it was."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open = 0
        self._was_on = False

    @contextmanager
    def paused(self) -> Iterator[None]:
        with self._lock:
            if not self._open:
                self._was_on = gc.isenabled()
                gc.disable()
            self._open += 1
        try:
            yield
        finally:
            with self._lock:
                self._open -= 1
                if not self._open and self._was_on:
                    gc.enable()


gc_paused = _Pauses().paused
