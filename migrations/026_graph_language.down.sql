ALTER TABLE graphs DROP COLUMN language;
