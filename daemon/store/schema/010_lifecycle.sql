-- Outgoing notifications, and the record of erasures.
-- A portal may name an endpoint; events for it are written to the outbox in the same
-- transaction as what they report, and delivered from there (at least once, retried).
CREATE TABLE notify_endpoints (
    portal        VARCHAR PRIMARY KEY,
    url           VARCHAR NOT NULL,
    secret        VARCHAR NOT NULL,          -- whsec_..., signs the deliveries
    created_at    TIMESTAMPTZ NOT NULL
);

CREATE TABLE outbox (
    id            VARCHAR PRIMARY KEY,       -- evt_...: the webhook-id, stable over retries
    portal        VARCHAR NOT NULL,
    type          VARCHAR NOT NULL,          -- flag.raised | flag.reviewed | ratings.updated
    payload       VARCHAR NOT NULL,          -- JSON: the body sent
    subject       VARCHAR,                   -- submission id the event is about, if any
    created_at    TIMESTAMPTZ NOT NULL,
    state         VARCHAR NOT NULL,          -- pending | delivered | failed
    attempts      INTEGER NOT NULL,
    next_at       TIMESTAMPTZ NOT NULL,      -- when the next attempt is due
    retry_from    TIMESTAMPTZ NOT NULL,      -- creation, or the last redelivery: retries
                                             -- stop notify.give_up_hours after it
    delivered_at  TIMESTAMPTZ,
    last_status   INTEGER,                   -- HTTP status of the last attempt, if any
    last_error    VARCHAR
);

-- That an erasure happened, without whom it was about.
CREATE TABLE erasures (
    erased_at     TIMESTAMPTZ NOT NULL,
    portal        VARCHAR NOT NULL,
    actor         VARCHAR NOT NULL,
    rows          VARCHAR NOT NULL           -- JSON: table -> rows removed
);
