-- Erasure that lasts: whom fairgrid must refuse, and whether the file still holds what
-- an erasure deleted.
-- A person once erased: an HMAC-SHA256 of portal and player id under the key kept beside
-- the database (never in it, never in a backup), so the list names no one to whoever
-- holds the file; webhooks for a listed person are refused (410).
CREATE TABLE erased_players (
    digest        VARCHAR PRIMARY KEY,       -- hex HMAC-SHA256 of portal \x1f player id
    erased_at     TIMESTAMPTZ NOT NULL
);

-- DuckDB keeps deleted rows' bytes in the file until the file is rewritten: NULL until
-- the rewrite after this erasure (Store.rewrite); the daemon rewrites at start while any
-- is NULL.
ALTER TABLE erasures ADD COLUMN rewritten_at TIMESTAMPTZ;
