-- How many times scoring found that a solve repeats the log of another player's solve
-- it had not been compared with (scored beside it, or committed before it and scored
-- after). A score written by a batch that read fewer marks than the row holds
-- leaves the solve 'rescore': its evidence never saw that other solve.
ALTER TABLE submissions ADD COLUMN repeat_marks INTEGER DEFAULT 0;
UPDATE submissions SET repeat_marks = 0 WHERE repeat_marks IS NULL;
