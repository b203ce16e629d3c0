"""What kind of work each slice is, for colouring: from its category, and its name for NCCL."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..analysis.syncs import sync_rows
from ..patterns import COMM_NAME
from ..trace import Trace

KINDS = (
    "other",
    "cpu_op",
    "annotation",
    "python",
    "runtime",
    "kernel",
    "memcpy",
    "memset",
    "comm",
    "gpu_annotation",
    "sync",
)
_BY_CATEGORY = {
    "cpu_op": "cpu_op",
    "operator": "cpu_op",
    "user_annotation": "annotation",
    "python_function": "python",
    "cuda_runtime": "runtime",
    "cuda_driver": "runtime",
    "runtime": "runtime",
    "mtia_runtime": "runtime",
    "kernel": "kernel",
    "mtia_ccp_events": "kernel",
    "gpu_memcpy": "memcpy",
    "memcpy": "memcpy",
    "gpu_memset": "memset",
    "memset": "memset",
    "gpu_user_annotation": "gpu_annotation",
    "cuda_sync": "sync",
}


def slice_kinds(trace: Trace) -> npt.NDArray[np.int8]:
    """The kind (index into KINDS) of every slice."""
    by_cat = np.asarray(
        [KINDS.index(_BY_CATEGORY.get(c.lower(), "other")) for c in trace.categories] + [0],
        np.int8,
    )
    comm = np.asarray([bool(COMM_NAME.search(n)) for n in trace.names] + [False])
    kinds = by_cat[trace.slices.cat]
    kinds[comm[trace.slices.name]] = KINDS.index("comm")
    kinds[sync_rows(trace)] = KINDS.index("sync")  # CPU calls waiting for the GPU
    return kinds
