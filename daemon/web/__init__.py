"""The HTTP service: the aiohttp app (:mod:`.app`), its middlewares, and one module per
route family: the solve webhook, puzzles, organiser queries and reviews, nightly runs, health.
It imports nothing of the console (:mod:`fairgrid.daemon.console`), which builds on it."""
