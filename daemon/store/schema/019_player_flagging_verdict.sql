-- The verdict that flagged the player (JSON: PlayerVerdict.to_json) and its p, kept with
-- the case: a flagged player stays flagged until a person decides, even when later solves
-- dilute the evidence; the reviewer reads what flagged them beside what the season shows
-- now, and the queue ranks the case by the stronger of the two. NULL for a player never
-- flagged. A player flagged before this column was flagged by the verdict stored then.
ALTER TABLE player_verdicts ADD COLUMN flagging_verdict VARCHAR;
ALTER TABLE player_verdicts ADD COLUMN flagging_p DOUBLE;
UPDATE player_verdicts SET flagging_verdict = verdict, flagging_p = p_value
    WHERE state = 'flagged';
