-- Honest nulls learnt from real unflagged solves, per fairgrid level (issue 5: "from the
-- empirical distribution of unflagged solves for puzzles of similar rating").
ALTER TABLE rating_runs ADD COLUMN band_nulls VARCHAR;  -- JSON: level -> signal -> [centre, scale]
