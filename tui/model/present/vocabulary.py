"""The one header vocabulary of every table: torch's `key_averages().table()` names where torch
has one, one word for each other quantity, used by every output and pane.

A kernel's (or a graph node's) summed GPU time is `Total`, the GPU time of the kernels an op
or a region launched is `GPU total`; per call, `Avg`, `Min` and `Max`; a share is the column's
name and `%`.
"""

from __future__ import annotations

# torch's names (key_averages().table()).
NAME = "Name"
SELF_CPU_PCT = "Self CPU %"
SELF_CPU = "Self CPU"
CPU_TOTAL_PCT = "CPU total %"
CPU_TOTAL = "CPU total"
CPU_AVG = "CPU time avg"
SELF_CUDA = "Self CUDA"
SELF_CUDA_PCT = "Self CUDA %"
CUDA_TOTAL = "CUDA total"
CUDA_AVG = "CUDA time avg"
CALLS = "# of Calls"
INPUT_SHAPES = "Input Shapes"
# One word for each of the rest.
TOTAL = "Total"  # a kernel's or a graph node's GPU time, summed over its calls
TOTAL_PCT = "Total %"
GPU_TOTAL = "GPU total"  # the GPU time of the kernels an op or a region launched
GPU_PCT = "GPU %"
AVG, MIN, MAX = "Avg", "Min", "Max"
SELF = "Self"
KERNELS = "Kernels"
STATUS = "Status"
VERDICT = "Verdict"
GPU_BUSY = "GPU busy"
