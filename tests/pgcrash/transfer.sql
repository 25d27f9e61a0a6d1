-- pgcrash's SQL workload example (docs/pgcrash.md section 1): the setup runs once, before
-- the base image; after the marker line each line is one transaction (one psql -c call).
CREATE TABLE acct (id int PRIMARY KEY, bal int NOT NULL, note text NOT NULL);
INSERT INTO acct SELECT i, 100, repeat('n', 300) FROM generate_series(1, 30) i;
-- transactions
UPDATE acct SET bal = bal - 10 WHERE id = 1; UPDATE acct SET bal = bal + 10 WHERE id = 2;
INSERT INTO acct VALUES (31, 0, 'opened');
CHECKPOINT
UPDATE acct SET bal = bal - 5 WHERE id = 3; UPDATE acct SET bal = bal + 5 WHERE id = 4;
DELETE FROM acct WHERE id = 31;
