-- fairgrid schema, version 6: the moves of acknowledged submissions are written behind the
-- acknowledging transaction. That transaction stores the submission row with its raw body
-- (which holds every move), so nothing acknowledged can be lost; the writer inserts the
-- moves rows a moment later, many batches at a time, and moves_through says how far it
-- got: every submission with sub_key <= through has its moves stored. After a crash,
-- store.connect() re-derives the rest from the raw bodies (docs/architecture.md).
CREATE TABLE moves_through (
    through         BIGINT NOT NULL
);
INSERT INTO moves_through SELECT coalesce(max(sub_key), 0) FROM submissions;
