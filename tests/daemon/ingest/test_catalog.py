"""Puzzle checks of the catalog: turns per sender, refusals remembered."""

from __future__ import annotations

import asyncio

import pytest

from fairgrid.daemon.errors import ValidationError
from fairgrid.daemon.ingest import catalog as catalog_mod
from fairgrid.daemon.ingest.catalog import PuzzleCatalog


async def test_a_portal_checks_one_puzzle_at_a_time_and_others_go_on(monkeypatch):
    """A portal whose checks run long holds one check at a time; another portal's check
    runs meanwhile, and a text refused once is refused again without a search."""
    release, started, calls = asyncio.Event(), [], []

    async def check(text, field, type_name):
        calls.append(text)
        started.append(text)
        if text.startswith("slow"):
            await release.wait()
        if text.endswith("bad"):
            raise ValidationError(field, "the puzzle has no solution")
        return text, 3, "1" * 81
    monkeypatch.setattr(catalog_mod, "check_puzzle_off_loop", check)
    cat = PuzzleCatalog(None)
    hostile = [asyncio.create_task(cat.check(f"slow-{k}", "puzzle.givens", "sudoku", "a"))
               for k in range(3)]
    await asyncio.sleep(0)
    assert await cat.check("quick", "puzzle.givens", "sudoku", "b") == ("quick", 3, "1" * 81)
    assert started == ["slow-0", "quick"]  # portal a's others wait for its first
    release.set()
    await asyncio.gather(*hostile)
    assert sorted(started) == ["quick", "slow-0", "slow-1", "slow-2"]
    for _ in range(2):
        with pytest.raises(ValidationError, match="no solution") as exc:
            await cat.check("x-bad", "givens", "sudoku")
        assert exc.value.field == "givens"
    assert calls.count("x-bad") == 1
    with pytest.raises(ValidationError):  # the type is part of what was refused
        await cat.check("x-bad", "givens", "nurikabe")
    assert calls.count("x-bad") == 2
