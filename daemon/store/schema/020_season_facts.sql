-- What the player verdict reads of each scored solve (JSON: SolveFacts.to_json), written
-- with the score: some 500 bytes, where the evidence it comes from is some 14 KB to read
-- and parse for every solve of a season at every judgement. NULL for a score written
-- before this column: the verdict reads that solve's evidence and stores the facts.
ALTER TABLE scores ADD COLUMN season_facts VARCHAR;
