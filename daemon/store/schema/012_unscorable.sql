-- A submission scoring fails on (a stored body that no longer reads, an error in the
-- analytics) ends with status 'unscorable' and the reason here, instead of being retried
-- with its whole batch for ever. Statuses: pending | scored | rescore | unscorable.
ALTER TABLE submissions ADD COLUMN score_error VARCHAR;
