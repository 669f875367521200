-- An organiser sees the portals listed in ``portals``, or every portal when
-- ``all_portals`` (granted explicitly: fairgrid user add --all-portals). An empty list used
-- to mean every portal; people added so keep what they had.
ALTER TABLE users ADD COLUMN all_portals BOOLEAN DEFAULT false;
UPDATE users SET all_portals = (portals = '[]');
