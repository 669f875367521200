-- The verdict that flagged the player (JSON: PlayerVerdict.to_json), kept with the case:
-- a flagged player stays flagged until a person decides, even when later solves dilute
-- the evidence, and the reviewer reads what flagged them beside what the season shows now.
-- NULL for a player never flagged, or flagged before this column.
ALTER TABLE player_verdicts ADD COLUMN flagging_verdict VARCHAR;
