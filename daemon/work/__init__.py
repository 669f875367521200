"""Background work: puzzle analysis, scoring, and the nightly rating refresh.

Analysis and scoring share one queue-and-sweep abstraction (:mod:`.queue`); the heavy
computation runs in the process pool (:mod:`.pool`); the nightly job
(:mod:`.nightly`, scheduled by :mod:`.nightly_runner`) loads, calls ``analytics`` and writes.
"""
