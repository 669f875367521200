-- One word, one meaning (docs/architecture.md#glossary): "order" is the fill order only,
-- the side of a Sudoku box is its box size; a learnt null is per level, not per band.
ALTER TABLE puzzles RENAME COLUMN puzzle_order TO box_size;
ALTER TABLE rating_runs RENAME COLUMN band_nulls TO level_nulls;
