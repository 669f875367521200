-- fairgrid schema, version 1: portals, puzzles, submissions, moves, dedupe keys, and the
-- tables later stages fill (scores, flags with history, job runs).
CREATE TABLE portals (
    name        VARCHAR PRIMARY KEY,
    created_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE puzzles (
    id               VARCHAR PRIMARY KEY,
    givens           VARCHAR NOT NULL,      -- one-line format
    puzzle_order     INTEGER NOT NULL,
    solution         VARCHAR,               -- one-line format
    status           VARCHAR NOT NULL,      -- pending | ready | invalid
    error            VARCHAR,
    registered_at    TIMESTAMPTZ NOT NULL,
    analysed_at      TIMESTAMPTZ,
    analysis_seconds DOUBLE,
    sa_median_steps  DOUBLE,                -- SA difficulty metric (thesis §3.1)
    sa_capped_runs   INTEGER,
    order_basis_runs INTEGER,
    predicted_order  VARCHAR,               -- JSON: per cell rank, 0 for givens
    order_median     VARCHAR,               -- JSON: per cell median rank, null for givens
    order_spread     VARCHAR,               -- JSON: per cell IQR, null for givens
    level            INTEGER,
    ratings          VARCHAR                -- JSON: metric name -> value (ratings issue)
);

CREATE TABLE submissions (
    sub_key         BIGINT NOT NULL UNIQUE, -- compact key the moves refer to
    portal          VARCHAR NOT NULL,
    submission_id   VARCHAR NOT NULL,
    webhook_id      VARCHAR NOT NULL,
    tournament_id   VARCHAR,
    player_id       VARCHAR NOT NULL,
    puzzle_id       VARCHAR NOT NULL,
    started_at      TIMESTAMPTZ NOT NULL,
    received_at     TIMESTAMPTZ NOT NULL,
    committed_at    TIMESTAMPTZ NOT NULL,
    n_moves         INTEGER NOT NULL,
    duration_ms     BIGINT NOT NULL,
    complete        BOOLEAN NOT NULL,       -- the log ends in the solution
    status          VARCHAR NOT NULL,       -- pending (not scored yet) | scored
    body_hash       VARCHAR NOT NULL,       -- sha256 of the raw body
    raw             VARCHAR NOT NULL,       -- the raw JSON payload, unknown fields kept
    PRIMARY KEY (portal, submission_id)
);

CREATE TABLE moves (                    -- numbers only: the biggest table, bulk-inserted
    sub_key         BIGINT NOT NULL,        -- submissions.sub_key
    seq             INTEGER NOT NULL,
    t_ms            BIGINT NOT NULL,
    cell            SMALLINT NOT NULL,
    digit           SMALLINT NOT NULL,
    note            BOOLEAN NOT NULL        -- a pencil mark (kind "note"), not a placement
);

CREATE TABLE webhook_ids (
    portal          VARCHAR NOT NULL,
    webhook_id      VARCHAR NOT NULL,
    submission_id   VARCHAR NOT NULL,
    received_at     TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (portal, webhook_id)
);

CREATE TABLE scores (
    portal          VARCHAR NOT NULL,
    submission_id   VARCHAR NOT NULL,
    scored_at       TIMESTAMPTZ NOT NULL,
    anomaly         DOUBLE,
    p_value         DOUBLE,
    flagged         BOOLEAN,
    evidence        VARCHAR,                -- JSON
    PRIMARY KEY (portal, submission_id)
);

CREATE SEQUENCE flag_ids;
CREATE TABLE flags (
    id              BIGINT PRIMARY KEY DEFAULT nextval('flag_ids'),
    portal          VARCHAR NOT NULL,
    submission_id   VARCHAR NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    state           VARCHAR NOT NULL,       -- open | cleared | confirmed
    reasons         VARCHAR                 -- JSON
);

CREATE TABLE flag_history (
    flag_id         BIGINT NOT NULL,
    changed_at      TIMESTAMPTZ NOT NULL,
    state           VARCHAR NOT NULL,
    note            VARCHAR,
    actor           VARCHAR
);

CREATE TABLE job_runs (
    id              VARCHAR PRIMARY KEY,
    job             VARCHAR NOT NULL,
    started_at      TIMESTAMPTZ NOT NULL,
    finished_at     TIMESTAMPTZ,
    status          VARCHAR NOT NULL,
    rows            VARCHAR                 -- JSON
);
