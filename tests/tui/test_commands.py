"""The commands' registry and parsers: each command's own `--help`, the flags argparse refuses
together, the rules it cannot declare, and what a bare path runs."""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import pytest

from tests.conftest import DATA
from tests.tui.helpers import Done, run
from tui import cli, commands
from tui.commands.command import CommandError

MISSING = "/nonexistent/trace.json"  # a refusal that names this file came after a load began
VIEWS_AND_TABLES = ["--kernels", "--by-shape", "--roofline", "--tree", "--graphs"]


def _flags(command: commands.Command) -> list[str]:
    parser = argparse.ArgumentParser()
    command.prepare_parser(parser)
    return [s for action in parser._actions for s in action.option_strings]


LOADED = [c.load() for c in commands.COMMANDS]


def test_each_command_is_registered_under_its_own_name():
    assert [c.name for c in LOADED] == [c.name for c in commands.COMMANDS]


@pytest.mark.parametrize("command", LOADED, ids=lambda c: c.name)
def test_every_command_has_its_own_help_naming_its_flags(command):
    done = run(command.name, "--help")
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith(f"usage: trace-tui {command.name} ")
    assert " ".join(command.description.split()) in " ".join(done.stdout.split())
    flags = _flags(command)
    assert flags and all(flag in done.stdout for flag in flags)


def test_the_help_lists_every_command_and_each_names_its_own_flags():
    top = run("--help")
    assert top.returncode == 0 and top.stdout.startswith("usage: trace-tui [FILE|FOLDER")
    for command in LOADED:
        assert f"    {command.name} " in top.stdout
    expected = {
        "view": ["--list", "--no-cache", "--workers", "--follow", "--cluster"],
        "info": ["--json", "--yes"],
        "summary": [*VIEWS_AND_TABLES, "--format", "--sort", "--step", "--depth", "--peaks"],
        "diff": ["--fail-on-regression", "--metric", "--format", "--top", "--cluster"],
        "mcp": [],
    }
    assert [c.name for c in LOADED] == list(expected)
    for command in LOADED:
        assert set(expected[command.name]) <= set(_flags(command)), command.name


@pytest.mark.parametrize(("first", "second"), list(itertools.combinations(VIEWS_AND_TABLES, 2)))
def test_one_table_or_view_at_a_time_is_argparse_s_refusal(first, second):
    done = run("summary", MISSING, first, second)
    assert done.returncode == 2 and done.stdout == ""
    last = done.stderr.splitlines()[-1]
    assert last == f"trace-tui summary: error: argument {second}: not allowed with argument {first}"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--depth", "3"], "--depth shapes --tree's output: add --tree"),
        (["--kernels", "--weight", "cpu"], "--weight shapes --tree's output: add --tree"),
        (["--view", "modules"], "--view shapes --tree's output: add --tree"),
        (["--tree", "--top", "5"], "--tree lists its own rows: not with --top"),
        (["--tree", "--sort", "calls"], "--tree lists its own rows: not with --sort"),
        (
            ["--roofline", "--sort", "calls", "--step", "1"],
            "--roofline lists its own rows: not with --sort, --step",
        ),
        (["--graphs", "--step", "2"], "--graphs lists its own rows: not with --step"),
        (["--tree", "--depth", "0"], "--depth must be 1 or more"),
        (["--top", "-1"], "--top must be 0 or more"),
        (["--kernels", "--sort", "self_cpu"], "--sort self_cpu: choose one of name, total,"),
    ],
)
def test_the_rules_argparse_cannot_declare_refuse_before_loading(flags, message):
    done = run("summary", MISSING, *flags)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"trace-tui: {message}") and done.stderr.count("\n") == 1


def test_what_the_rules_allow_runs():
    for flags in (["--tree", "--step", "2", "--depth", "2"], ["--roofline", "--top", "3"]):
        done = run("summary", str(DATA / "nested_cpu.json"), *flags)
        assert done.returncode == 0, (flags, done.stderr)


@pytest.mark.parametrize(
    "args",
    [[], [str(DATA / "nested_cpu.json")], [str(DATA / "nested_cpu.json")] * 2],
    ids=["nothing", "a-path", "two-paths"],
)
def test_a_bare_path_or_none_is_the_viewer_which_needs_a_terminal(args):
    for argv in (args, ["view", *args]):
        done = run(*argv)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr == (
            "trace-tui: the viewer needs a terminal; for text output use: trace-tui info FILE\n"
        )


class _App:
    load_error = None
    return_code = 0

    def run(self) -> None:
        pass


@pytest.mark.parametrize(
    ("argv", "path", "new"),
    [
        ([], "h100_bert_small.json.gz", None),  # the bundled GPU example
        (["--sample", "cpu"], "transformer_128_cpu.pt.trace.json.gz", None),
        (["A.json"], "A.json", None),
        (["A.json", "B.json"], "A.json", "B.json"),
        (["--no-cache", "A.json"], "A.json", None),
    ],
)
def test_at_a_terminal_a_bare_path_opens_the_app_from_make_app(monkeypatch, argv, path, new):
    made = []

    def make_app(*args: object) -> _App:
        made.append(args)
        return _App()

    monkeypatch.setattr(cli, "make_app", make_app)
    monkeypatch.setattr("tui.commands.view.check_start", lambda p: None)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr("tui.commands.view.enough_memory", lambda *a, **k: True)
    assert cli.main(argv) == 0
    [(opened, cache, shown_as, _workers, second, _executor, follow, watch)] = made
    assert follow is None and watch is None
    assert (Path(opened).name, second) == (path, new)
    # A bundled example is named in the header, not by its path inside the package.
    assert (shown_as is not None) == (argv in ([], ["--sample", "cpu"]))
    assert shown_as is None or shown_as.startswith("bundled example: ")
    assert (cache is None) == ("--no-cache" in argv)


class _Echo:
    """A command a test registers: the module plus the one line in COMMANDS is all it takes."""

    name = "echo"
    help = "say the words back"
    description = "Say the words back, or refuse with one line."

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("words", nargs="*")
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--loud", action="store_true")
        group.add_argument("--quiet", action="store_true")

    def run(self, args: argparse.Namespace) -> int:
        if not args.words:
            raise CommandError("echo: nothing to say", 2)
        text = " ".join(args.words)
        print(text.upper() if args.loud else text)
        return 0


def test_a_new_command_is_its_module_and_one_registration_line(monkeypatch):
    echo = commands.Registered("echo", f"{__name__}:_Echo")
    monkeypatch.setattr(commands, "COMMANDS", [*commands.COMMANDS, echo])
    assert run("echo", "a", "b", "--loud") == Done(0, "A B\n", "")
    assert run("echo") == Done(2, "", "trace-tui: echo: nothing to say\n")
    clash = run("echo", "x", "--loud", "--quiet")
    assert clash.returncode == 2 and "not allowed with argument --loud" in clash.stderr
    helped = run("echo", "--help")
    assert helped.returncode == 0 and "Say the words back" in helped.stdout
    assert "--quiet" in helped.stdout
    assert "    echo " in run("--help").stdout and "say the words back" in run("--help").stdout
    unknown = run("echo", "x", "--nope")
    assert unknown.returncode == 2
    assert (
        unknown.stderr.splitlines()[-1] == "trace-tui echo: error: unrecognized arguments: --nope"
    )
    # The first command stays what a bare path runs.
    assert "needs a terminal" in run(str(DATA / "nested_cpu.json")).stderr
