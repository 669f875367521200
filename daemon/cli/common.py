"""What every command shares: the one-line user error, argument types, progress bars,
settings."""

from __future__ import annotations

import argparse
import sys

from ..text import ascii_int

EXIT_USAGE = 2
PUZZLE_HELP = ("the puzzle: text (81 characters, '.' or '0' for blanks; grids; see "
               "docs/puzzles.md) or a path to a file holding it")
CONFIG_HELP = "TOML config file (default: $FAIRGRID_CONFIG, else the embedded default)"


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse with the project's one-line usage errors: the problem, and where the
    usage is (``--help``), exit status 2. Subcommands' parsers are of this class too."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.set_defaults(cli_prog=self.prog)  # the innermost command parsed wins

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_args(self, args=None, namespace=None):
        """Arguments nothing took are named by the command they were given to."""
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            prog = getattr(parsed, "cli_prog", self.prog)
            self.exit(EXIT_USAGE, f"{prog}: error: unrecognized arguments: {' '.join(extra)} "
                      f"(see {prog} --help)\n")
        return parsed


def _number(convert, minimum, rule: str, maximum=float("inf")):
    """An argparse type: ``convert`` the text and require ``minimum <= value <=
    maximum`` (and below infinity)."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not (minimum <= value <= maximum and value < float("inf")):
            raise argparse.ArgumentTypeError(f"must be {rule}, got {text}")
        return value
    return parse


def _int(text: str) -> int:
    """An integer typed in ASCII digits: int() also takes "1_0", "١٠" and "１０" (10),
    which no one types for 10, and a flag id read that way decides on another flag."""
    digits = text.removeprefix("-")
    value = ascii_int(digits, max(len(digits), 1))  # the range is checked after
    if value is None:
        raise ValueError(text)
    return -value if text.startswith("-") else value


def _float(text: str) -> float:
    """A number typed in ASCII without digit separators (as :func:`_int`)."""
    if not text.isascii() or "_" in text:
        raise ValueError(text)
    return float(text)


# counts reach the compiled solvers and DuckDB as 32- and 64-bit integers
positive = _number(_int, 1, "from 1 to 2,147,483,647", 2**31 - 1)
seed = _number(_int, 0, "from 0 to 2**63 - 1", 2**63 - 1)
ident = _number(_int, 0, "an id from 0 to 2**63 - 1", 2**63 - 1)
whole = _number(_int, 0, "a whole number", 2**31 - 1)  # a choice among a few (choices=)
positive_float = _number(_float, 1e-9, "a positive number")
share = _number(_float, 0.0, "from 0 to 1", 1.0)
seconds = _number(_float, 0.0, "a number of seconds from 0 to a day", 86_400.0)
# a port the command listens on and connects to (0 would be a free one nobody can name)
tcp_port = _number(_int, 1, "from 1 to 65,535", 65_535)
# a Nurikabe grid's side for the generator: past a dozen it finds no unique puzzle anyway
grid_side = _number(_int, 2, "from 2 to 20", 20)


def named(text: str) -> str:
    """An argparse type for a name a filter or a target takes: an empty one (an unset
    shell variable) would otherwise drop the filter and act on everything."""
    if not text:
        raise argparse.ArgumentTypeError("must name one (it is empty)")
    return text


def png_file(text: str) -> str:
    """An argparse type: a file to draw a PNG in, named ``*.png`` (matplotlib takes the
    format from the name, and writes ``NAME.png`` beside a name without one) and not a
    folder."""
    from pathlib import Path

    if Path(text).suffix.lower() != ".png":
        raise argparse.ArgumentTypeError(f"name a .png file, got {text!r}")
    try:  # (argparse runs this outside the command's own handling of OSError)
        folder = Path(text).is_dir()
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{text}: {exc.strerror}") from None
    if folder:
        raise argparse.ArgumentTypeError(f"{text} is a folder: name the PNG file to write")
    return text


def not_utf8(args: argparse.Namespace) -> str | None:
    """The first argument whose text is not UTF-8 (the shell handed over bytes that
    decode to no text: they cannot go into a URL, JSON or a DuckDB path): its name, or
    None. A file name that is not UTF-8 is refused too, for one rule everywhere."""
    for name, value in vars(args).items():
        for v in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(v, str):
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    return name
    return None


def progress_bar(total: int, desc: str, unit: str = "run"):
    """A tqdm bar on stderr when stderr is a terminal; otherwise None."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False)


def settings_of(config: str | None, *, generate: bool = False):
    """The settings (as the daemon loads them); CliError naming the problem."""
    from fairgrid.daemon.settings import SettingsError, load_settings

    try:
        settings, _ = load_settings(config, generate=generate)
    except SettingsError as exc:
        raise CliError(str(exc)) from None
    return settings
