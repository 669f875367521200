-- A player's verdict over their season (analytics.player_verdict), judged after every
-- scoring batch, after a flag decision and by the nightly job; reviewed like a flag.
-- ``state``: clear | flagged (what the evidence says, set by fairgrid) | cleared |
-- confirmed (a person's decision). ``reviewed_solves``: the solves a person saw when
-- clearing (JSON list of submission ids): only other solves can flag the player again.
CREATE TABLE player_verdicts (
    portal          VARCHAR NOT NULL,
    player_id       VARCHAR NOT NULL,
    state           VARCHAR NOT NULL,
    flagged         BOOLEAN NOT NULL,       -- the evidence's own verdict now
    p_value         DOUBLE NOT NULL,
    solves          INTEGER NOT NULL,
    verdict         VARCHAR NOT NULL,       -- JSON: PlayerVerdict.to_json
    judged_at       TIMESTAMPTZ NOT NULL,
    flagged_at      TIMESTAMPTZ,            -- when it last became flagged
    reviewed_solves VARCHAR,
    PRIMARY KEY (portal, player_id)
);

CREATE TABLE player_verdict_history (
    portal          VARCHAR NOT NULL,
    player_id       VARCHAR NOT NULL,
    changed_at      TIMESTAMPTZ NOT NULL,
    state           VARCHAR NOT NULL,
    note            VARCHAR,
    actor           VARCHAR
);

-- a portal's own player-level null, learnt by the nightly job from its players
CREATE TABLE player_nulls (
    portal          VARCHAR PRIMARY KEY,
    learnt_at       TIMESTAMPTZ NOT NULL,
    null_json       VARCHAR NOT NULL
);
