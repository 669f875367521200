"""Everything with I/O, one sub-package per stage of the data flow::

    webhook ─▶ ingest ─▶ store ─▶ work.scoring ─▶ store ─▶ web (queries) / metrics
    (web)      verify,    one      analytics         scores,
               validate   writer   in a pool          flags
                                   ▲
    nightly (work.nightly_runner ─▶ work.nightly) ─ ratings ─┘ ─▶ re-score

* :mod:`.web` — the aiohttp app, middlewares, one module per route family;
* :mod:`.ingest` — signatures, body parsing (fast path and checked path), the replay
  against the puzzle;
* :mod:`.store` — DuckDB: connection and migrations, the single writer, the dedupe
  screen, and ``repository``, which holds every SQL statement;
* :mod:`.work` — background work: puzzle analysis, scoring, the nightly job, sharing one
  queue-and-sweep abstraction and one process pool;
* :mod:`.cli` — the ``fairgrid`` command line;
* :mod:`.settings`, :mod:`.metrics`, :mod:`.documents` — configuration, Prometheus
  metrics, the JSON documents of the organiser API.
"""
