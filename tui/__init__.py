"""trace-tui: a terminal viewer for PyTorch profiler and other Chrome-format traces."""

__version__ = "0.1.0"
