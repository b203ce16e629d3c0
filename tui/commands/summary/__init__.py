"""`trace-tui summary`: the command (`command.py`) and its views, one module each: the op,
kernel and by-shape table (the default), the roofline, the graphs, the call tree, and the rank
table of a folder of rank traces."""

from tui.commands.summary.command import SummaryCommand

__all__ = ["SummaryCommand"]
