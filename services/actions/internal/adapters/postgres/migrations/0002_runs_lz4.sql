-- A run's data and writes hold the record it made (an article of several
-- kB): compressed with lz4 rather than the default pglz, for CPU.
ALTER TABLE runs ALTER COLUMN data SET COMPRESSION lz4, ALTER COLUMN writes SET COMPRESSION lz4;
