"""SplitMix64: the random stream every fairgrid kernel draws from.

The kernels keep their generator state in one ``uint64`` so that numba holds it in a
register, and the C references in ``bench/`` implement the same three lines, so a kernel
and its C twin follow the same trajectory for the same seed (the benchmarks check that).
SplitMix64 (Steele, Lea & Flood 2014) passes BigCrush; its period of 2**64 is far beyond
any run here. Seeds come from ``numpy.random.SeedSequence``, so the Python side keeps
numpy's seeding discipline.

Integer draws use the multiply-shift map ``(bits * m) >> k`` (Lemire 2019) without the
rejection step: its bias is below ``m / 2**k`` (at most 25 / 2**21 ~ 1.2e-5 here), far
below anything the solvers can notice, and it keeps the step loop branch-free.
"""

from __future__ import annotations

import numpy as np
from numba import njit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
U1 = np.uint64(1)
U11 = np.uint64(11)
U21 = np.uint64(21)
U22 = np.uint64(22)
U27 = np.uint64(27)
U30 = np.uint64(30)
U31 = np.uint64(31)
U32 = np.uint64(32)
U43 = np.uint64(43)
MASK21 = np.uint64((1 << 21) - 1)
MASK32 = np.uint64((1 << 32) - 1)
INV53 = 1.0 / 9007199254740992.0  # 2**-53


@njit(inline="always")
def next_u64(state):
    """Advance the state; return (new state, 64 random bits)."""
    state = state + GOLDEN
    z = state
    z = (z ^ (z >> U30)) * MIX1
    z = (z ^ (z >> U27)) * MIX2
    return state, z ^ (z >> U31)


@njit(inline="always")
def below32(bits32, m):
    """Map 32 random bits to 0..m-1 (multiply-shift)."""
    return np.int64((bits32 * np.uint64(m)) >> U32)


@njit(inline="always")
def below21(bits21, m):
    """Map 21 random bits to 0..m-1 (multiply-shift)."""
    return np.int64((bits21 * np.uint64(m)) >> U21)


@njit(inline="always")
def unit_float(bits):
    """Map 64 random bits to a double in [0, 1) with 53 bits of precision."""
    return np.float64(bits >> U11) * INV53


@njit(inline="always")
def shuffle_prefix(values, n, state):
    """Fisher-Yates shuffle of ``values[:n]`` in place; returns the new rng state."""
    for j in range(n - 1, 0, -1):
        state, bits = next_u64(state)
        r = below32(bits >> U32, j + 1)
        values[j], values[r] = values[r], values[j]
    return state


def seed_of(rng) -> int:
    """An int seed from an int or a numpy Generator (drawing one from it)."""
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(0, 2 ** 63))
    return int(rng)


def kernel_seed(rng) -> np.uint64:
    """A kernel seed drawn from a numpy Generator (or an int seed, for convenience)."""
    if rng is None:
        raise TypeError("rng is required: pass numpy.random.default_rng(seed) or an int seed")
    if isinstance(rng, (int, np.integer)):
        rng = np.random.default_rng(int(rng))
    return np.uint64(rng.integers(0, 2 ** 64, dtype=np.uint64))


def spawn_seeds(seed: int | None, count: int) -> np.ndarray:
    """``count`` independent kernel seeds from one seed (numpy SeedSequence spawning).

    Run ``i`` gets the same seed whatever process runs it, so results do not depend on
    how runs are spread over processes.
    """
    children = np.random.SeedSequence(seed).spawn(count)
    return np.array([c.generate_state(1, np.uint64)[0] for c in children], dtype=np.uint64)


def puzzle_seed(seed: int | None, key: str) -> int:
    """A kernel seed for one puzzle from the user's seed and the puzzle itself (its
    one-line text): the same puzzle and seed give the same seed wherever it stands in a
    batch and whatever else the batch holds."""
    import hashlib

    digest = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")
    return int(np.random.SeedSequence([int(seed or 0), digest]).generate_state(1, np.uint64)[0])
