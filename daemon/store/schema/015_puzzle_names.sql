-- Puzzle names are a portal's own (docs/puzzles.md#puzzle-ids): a webhook's puzzle.id is
-- looked up in that portal's names, so one portal can neither take an id another uses
-- nor have its solves replayed against another portal's puzzle. ``puzzles.id`` stays
-- the internal id every other table refers to; ``owner`` is the portal whose webhook
-- registered it (NULL: registered through POST /v1/puzzles, or before names were
-- scoped: shared by every portal).
ALTER TABLE puzzles ADD COLUMN owner VARCHAR;

CREATE TABLE puzzle_names (
    portal          VARCHAR NOT NULL,
    name            VARCHAR NOT NULL,       -- puzzle.id as the portal sends it
    puzzle_id       VARCHAR NOT NULL,       -- puzzles.id
    PRIMARY KEY (portal, name)
);
-- every puzzle a portal has sent solves of keeps its name for that portal
INSERT INTO puzzle_names SELECT DISTINCT portal, puzzle_id, puzzle_id FROM submissions;
