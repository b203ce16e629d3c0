"""The input formats: which importer reads a file, and how each one's args reader is rebuilt.

A new format is a sub-package beside `chrome_json/` with a `read(source, progress, workers) ->
Imported` that fills the intermediate, and an args reader; it is registered here, and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from ..trace import ArgsReader
from . import chrome_json
from .intermediate import Imported, Progress
from .source import Source

# (source, progress, workers): workers is how many processes may decode one file together.
Importer = Callable[[Source, Progress | None, int], Imported]
# Reader name -> how to make it again from the arrays the model cache kept.
ARGS_READERS: dict[str, Callable[[str, dict[str, npt.NDArray[np.int64]]], ArgsReader]] = {
    chrome_json.NAME: chrome_json.JsonArgs.from_arrays,
}


def importer_for(source: Source) -> Importer:
    """The importer for this file. Chrome JSON is the only one yet, and it says itself, in one
    line, when a file is not JSON or not a trace."""
    del source  # formats are told apart by their first bytes once there are two
    return chrome_json.read
