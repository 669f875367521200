-- Which erasure key the database's erasures were made with: an HMAC of a fixed text
-- under the key (it tells keys apart; it cannot test a player id). A backup restored
-- beside another key would list its erased people under digests nobody matches: the
-- daemon refuses to start on it instead of accepting their solves again.
CREATE TABLE erasure_key (
    id              INTEGER PRIMARY KEY,    -- always 1
    fingerprint     VARCHAR NOT NULL
);
