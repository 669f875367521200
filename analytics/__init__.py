"""Pure analytics over arrays: scoring, ratings, calibration (arrives with later issues)."""
