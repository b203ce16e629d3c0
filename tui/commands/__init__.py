"""The commands of `trace-tui`, one module each, and the one list that registers them: a new
command is its module (a class with `name`, `help`, `description`, `prepare_parser` and `run`;
see `command.Command`) plus one line below."""

from tui.commands.command import Command, Registered

# In the order `trace-tui --help` lists them. The first is what runs for a bare path
# (`trace-tui FILE` is `trace-tui view FILE`) and for no argument at all. Each is imported only
# when it runs (all of them for `trace-tui --help`), so that `info` pays for no other's imports.
COMMANDS: list[Registered] = [
    Registered("view", "tui.commands.view:ViewCommand"),
    Registered("info", "tui.commands.info:InfoCommand"),
    Registered("summary", "tui.commands.summary:SummaryCommand"),
    Registered("diff", "tui.commands.diff:DiffCommand"),
    Registered("mcp", "tui.commands.mcp:McpCommand"),
]

__all__ = ["COMMANDS", "Command", "Registered"]
