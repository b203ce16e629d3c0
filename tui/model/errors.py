"""The one error type the loader raises."""

from __future__ import annotations


class TraceError(Exception):
    """A trace could not be loaded; the message names the file and the problem in one line."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem
