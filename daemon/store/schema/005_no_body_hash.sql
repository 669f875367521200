-- fairgrid schema, version 5: no body_hash. Whether a resubmission of a stored submission
-- id is identical (200) or a conflict (409) is decided by comparing the two raw bodies as
-- canonical JSON when one arrives (validate.same_content); hashing every webhook's
-- canonical JSON up front cost ~25 us of the event loop's time per webhook for the rare
-- resubmission.
ALTER TABLE submissions DROP COLUMN body_hash;
