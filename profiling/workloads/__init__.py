"""The workloads, one module each."""
