"""Profiling backend: runs workloads under torch.profiler and exports Chrome traces."""
