"""The commands of `trace-tui`, one module each, and the one list that registers them: a new
command is its module (a class with `name`, `help`, `description`, `prepare_parser` and `run`;
see `command.Command`) plus one line below."""

from tui.commands.command import Command
from tui.commands.diff import DiffCommand
from tui.commands.info import InfoCommand
from tui.commands.summary import SummaryCommand
from tui.commands.view import ViewCommand

# In the order `trace-tui --help` lists them. The first is what runs for a bare path
# (`trace-tui FILE` is `trace-tui view FILE`) and for no argument at all.
COMMANDS: list[Command] = [
    ViewCommand(),
    InfoCommand(),
    SummaryCommand(),
    DiffCommand(),
]
