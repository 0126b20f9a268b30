-- What the outside providers charged for a run's calls (DataForSEO reports
-- a cost on every task), in billionths of a US dollar so that sums are
-- exact, and whether its data came from the SEO cache: what an agency
-- reconciles the credits it sells with what it pays.
ALTER TABLE runs
	ADD COLUMN provider_cost_nanousd bigint NOT NULL DEFAULT 0 CHECK (provider_cost_nanousd >= 0),
	ADD COLUMN cached boolean NOT NULL DEFAULT false;
