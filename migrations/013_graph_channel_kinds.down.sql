ALTER TABLE graphs DROP COLUMN channel_kinds;
