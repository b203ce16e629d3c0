"""What the numbers are: pure functions of a `Trace` (or of several, for ranks and diffs).

GPU attribution, the op and kernel tables, idle gaps, syncs, memory, steps, the verdict and the
summary. A new analysis is one module here; it never imports ingest or present.
"""
