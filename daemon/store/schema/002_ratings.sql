-- Nightly rating runs (issue 6): every run's fitted puzzle difficulties, player skills,
-- consensus orders and recalibration, kept as history; `current_rating` points at the
-- last complete run, flipped in the same transaction that writes the run's rows.
CREATE TABLE rating_runs (
    run_id          VARCHAR PRIMARY KEY,
    finished_at     TIMESTAMPTZ NOT NULL,
    solves          BIGINT NOT NULL,
    puzzles         INTEGER NOT NULL,
    players         INTEGER NOT NULL,
    mu              DOUBLE,                 -- this portal's offset from the calibration
    residual_sd     DOUBLE,
    calibration     VARCHAR,                -- JSON: recalibrated metrics -> log-time model
    correlations    VARCHAR                 -- JSON: metric -> {pearson, spearman} vs humans
);

CREATE TABLE puzzle_ratings (
    run_id          VARCHAR NOT NULL,
    puzzle_id       VARCHAR NOT NULL,
    difficulty      DOUBLE NOT NULL,        -- expected log seconds, average player
    prior           DOUBLE NOT NULL,        -- the metric-based expectation it started from
    expected_time_s DOUBLE NOT NULL,
    level           INTEGER NOT NULL,
    solves          INTEGER NOT NULL,
    median_log_t    DOUBLE,
    consensus_order VARCHAR,                -- JSON: median fill rank per cell (null: givens)
    consensus_spread VARCHAR,               -- JSON: {"spread": IQR per cell, "null": [centre, scale] of solves' rank correlation with the consensus}
    PRIMARY KEY (run_id, puzzle_id)
);

CREATE TABLE player_ratings (
    run_id          VARCHAR NOT NULL,
    portal          VARCHAR NOT NULL,
    player_id       VARCHAR NOT NULL,
    skill           DOUBLE NOT NULL,        -- log-speed advantage (positive = faster)
    solves          INTEGER NOT NULL,
    PRIMARY KEY (run_id, portal, player_id)
);

CREATE TABLE current_rating (
    id              INTEGER PRIMARY KEY,    -- always 1
    run_id          VARCHAR NOT NULL
);
