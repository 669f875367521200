"""The states of a flag, spelled once for the API, the console, the CLI, the metrics and
the SQL (``flags.state``).

Scoring raises a flag ``open``; a re-score that no longer flags the solve ``withdrawn``
it, unless a person already decided it (``repository.scores``). A reviewer sets
``cleared`` (honest), ``confirmed`` (cheating) or ``open`` again (reopened, e.g. on
appeal). An open or a confirmed flag stands against the player.
"""

from __future__ import annotations

from enum import StrEnum


class FlagState(StrEnum):
    """A flag's state; each member is its stored and published string."""

    OPEN = "open"
    WITHDRAWN = "withdrawn"
    CLEARED = "cleared"
    CONFIRMED = "confirmed"


# as plain strings, for what prints a member's repr (argparse's choices, lists in messages)
FLAG_STATES = tuple(s.value for s in FlagState)  # in the order lists and metrics show them
# what a reviewer may set (open: reopened), in the order the review form offers them
REVIEW_STATES = tuple(s.value for s in (FlagState.CLEARED, FlagState.CONFIRMED,
                                        FlagState.OPEN))
STANDING = (FlagState.OPEN, FlagState.CONFIRMED)  # flags that stand against a player


def sql_list(states) -> str:
    """``states`` as an SQL list of literals, e.g. ``('open', 'confirmed')``: the members
    are fixed words, so they are written into the statement, not bound."""
    return "(" + ", ".join(f"'{s.value}'" for s in states) + ")"
