-- Each scored solve's timing print (analytics.log_match.timing_print: per cell, the log
-- of the gap before its final digit and that digit's rank, float32, 8 bytes a cell),
-- which scoring compares with other players' solves of the same puzzle to find a log
-- that repeats another's. NULL for a score written before this column: such a
-- solve is compared with once it is scored again.
ALTER TABLE scores ADD COLUMN timing_print BLOB;
