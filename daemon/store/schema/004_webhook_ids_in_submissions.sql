-- fairgrid schema, version 4: webhook-ids are deduplicated against submissions.webhook_id
-- (every accepted submission keeps its webhook-id there), with an in-memory key filter in
-- front (daemon/keyfilter.py); the separate webhook_ids table only cost a statement per
-- write batch.
DROP TABLE webhook_ids;
