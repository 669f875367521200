-- People who sign in to the console or call the API with a personal token. Passwords are
-- Argon2id hashes; tokens are kept as SHA-256 digests (they are long random strings).
CREATE TABLE users (
    name          VARCHAR PRIMARY KEY,
    role          VARCHAR NOT NULL,          -- organiser | admin
    portals       VARCHAR NOT NULL,          -- JSON list of portal names; [] = every portal
    password_hash VARCHAR,
    disabled      BOOLEAN NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    changed_at    TIMESTAMPTZ NOT NULL
);

CREATE TABLE api_tokens (
    digest        VARCHAR PRIMARY KEY,       -- sha256 hex of the token
    user_name     VARCHAR NOT NULL,
    label         VARCHAR,
    created_at    TIMESTAMPTZ NOT NULL,
    revoked_at    TIMESTAMPTZ
);
