-- Each portal's own per-level honest nulls, learnt from its solves alone where the run
-- saw several portals (portal -> level key -> signal -> [centre, scale]): a portal's
-- solves are judged by its own where it has enough solves of a level, by every
-- portal's together (level_nulls) elsewhere. NULL for a run of one portal, or of
-- before it was kept.
ALTER TABLE rating_runs ADD COLUMN portal_level_nulls VARCHAR;
