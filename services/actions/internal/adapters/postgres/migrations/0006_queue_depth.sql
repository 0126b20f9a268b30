-- Each agency's count of queued runs, which every asynchronous submission
-- checks against --agency-max-queued. Counting the rows instead cost a scan
-- of the agency's queue per submission: 2 ms at 10,000 queued, and the
-- submissions of a flood went from 2,111 to 750 per second with it
-- (pgbench, 32 clients, docs/performance.md).
--
-- The count is kept by triggers on runs rather than by the statements that
-- change a run's status, so that no path (a submission, a claim, a cancel,
-- a requeue, recovery, a later migration) can make it drift. They are
-- deferred to the commit: the count's row, which every change of the
-- agency's queue locks, is then held for the commit alone, and always
-- after the agency's balance row, which no deadlock can come of. Measured
-- on the submission's statements: 1,287 per second with the count updated
-- as each run was inserted, 1,923 deferred (docs/performance.md).
CREATE TABLE queue_depth (
	agency_id uuid PRIMARY KEY,
	queued bigint NOT NULL CHECK (queued >= 0)
);

INSERT INTO queue_depth (agency_id, queued)
	SELECT agency_id, count(*) FROM runs WHERE status = 'queued' GROUP BY agency_id;

-- search_path FROM CURRENT: the function finds queue_depth in this schema
-- whatever the search path of the session whose change fires it.
CREATE FUNCTION queue_depth_change() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.status = 'queued' THEN
		UPDATE queue_depth SET queued = queued - 1 WHERE agency_id = OLD.agency_id;
	END IF;
	IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.status = 'queued' THEN
		INSERT INTO queue_depth AS d (agency_id, queued) VALUES (NEW.agency_id, 1)
			ON CONFLICT (agency_id) DO UPDATE SET queued = d.queued + 1;
	END IF;
	RETURN NULL;
END
$$;

-- The WHEN clauses keep every other change of a run (synchronous runs,
-- outcomes of running runs, the applied mark) free of the trigger.
CREATE CONSTRAINT TRIGGER queue_depth_insert AFTER INSERT ON runs DEFERRABLE INITIALLY DEFERRED
	FOR EACH ROW WHEN (NEW.status = 'queued') EXECUTE FUNCTION queue_depth_change();
CREATE CONSTRAINT TRIGGER queue_depth_update AFTER UPDATE OF status, agency_id ON runs DEFERRABLE INITIALLY DEFERRED
	FOR EACH ROW WHEN ((OLD.status = 'queued' OR NEW.status = 'queued')
		AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.agency_id IS DISTINCT FROM NEW.agency_id))
	EXECUTE FUNCTION queue_depth_change();
CREATE CONSTRAINT TRIGGER queue_depth_delete AFTER DELETE ON runs DEFERRABLE INITIALLY DEFERRED
	FOR EACH ROW WHEN (OLD.status = 'queued') EXECUTE FUNCTION queue_depth_change();

-- Recovery's index of finished runs whose records are unwritten held every
-- queued run too (status <> 'pending', not applied): one more index entry
-- per submission, and an index as long as the queue. Its query excludes
-- queued runs already.
DROP INDEX runs_unapplied_by_finish;
CREATE INDEX runs_unapplied_by_finish ON runs (finished_at) WHERE status NOT IN ('pending', 'queued') AND NOT applied;
