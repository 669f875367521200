-- Puzzle types (docs/puzzles.md): every puzzle names its type, and a player's skill is
-- fitted per type (a fast Sudoku solver may be a slow Nurikabe one). Rows from before
-- are Sudoku. ``puzzle_order`` is the block side, 0 for types without blocks;
-- ``solution`` is one base-36 symbol a cell in move values, for every type.
ALTER TABLE puzzles ADD COLUMN puzzle_type VARCHAR DEFAULT 'sudoku';
UPDATE puzzles SET puzzle_type = 'sudoku' WHERE puzzle_type IS NULL;

CREATE TABLE player_ratings_typed (
    run_id          VARCHAR NOT NULL,
    portal          VARCHAR NOT NULL,
    player_id       VARCHAR NOT NULL,
    skill           DOUBLE NOT NULL,        -- log-speed advantage (positive = faster)
    solves          INTEGER NOT NULL,
    puzzle_type     VARCHAR NOT NULL,       -- the type the skill is of
    PRIMARY KEY (run_id, portal, player_id, puzzle_type)
);
INSERT INTO player_ratings_typed
    SELECT run_id, portal, player_id, skill, solves, 'sudoku' FROM player_ratings;
DROP TABLE player_ratings;
ALTER TABLE player_ratings_typed RENAME TO player_ratings;

-- per type with solves: {"sudoku": {"mu", "residual_sd", "skill_sd", "solves"}, ...}
-- (NULL: a run from before types); mu and residual_sd above stay Sudoku's
ALTER TABLE rating_runs ADD COLUMN by_type VARCHAR;
