-- Scores written before the guarded nulls (evidence without a "version") were judged
-- against nulls as narrow as one simulator: every scored solve is scored again at idle
-- priority. Re-scoring may withdraw an open flag (with history), never a review.
UPDATE submissions SET status = 'rescore' WHERE status = 'scored';
