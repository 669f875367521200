-- Each portal's own difficulty of a puzzle several portals solved (the nightly job's
-- analytics.ratings.portal_difficulties): a portal's solves of the puzzle are priced on
-- it, so that one portal's players cannot move the time another portal's players are
-- judged against. A puzzle solved on one portal only has no row: its puzzle_ratings
-- difficulty is that portal's.
CREATE TABLE puzzle_portal_ratings (
    run_id          VARCHAR NOT NULL,
    puzzle_id       VARCHAR NOT NULL,
    portal          VARCHAR NOT NULL,
    difficulty      DOUBLE NOT NULL,        -- expected log seconds, average player there
    solves          INTEGER NOT NULL,       -- that portal's solves of it in the fit
    PRIMARY KEY (run_id, puzzle_id, portal)
);
