-- "order" is the block side only (puzzle_order); the fill order's columns say so.
ALTER TABLE puzzles RENAME COLUMN order_basis_runs TO fill_basis_runs;
ALTER TABLE puzzles RENAME COLUMN predicted_order TO predicted_fill_order;
ALTER TABLE puzzles RENAME COLUMN order_median TO fill_rank_median;
ALTER TABLE puzzles RENAME COLUMN order_spread TO fill_rank_spread;
ALTER TABLE puzzle_ratings RENAME COLUMN consensus_order TO consensus_fill_rank;
ALTER TABLE puzzle_ratings RENAME COLUMN consensus_spread TO consensus_fill_spread;
