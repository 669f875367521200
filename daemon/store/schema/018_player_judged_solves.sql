-- The solves a stored verdict judged (JSON list of submission ids): clearing a player
-- remembers these, not every solve scored by the time of the decision, which may hold
-- solves the reviewer never saw judged. NULL for a verdict judged before this column.
ALTER TABLE player_verdicts ADD COLUMN judged_solves VARCHAR;
