package app

// QueuedRecordJobs is how many finished runs' records wait in the batch
// writers' queue, for tests that must know every run has queued them.
func QueuedRecordJobs(a *Actions) int { return len(a.batch.jobs) }

// RecordWritersRunning reports whether Background's record writers take
// jobs.
func RecordWritersRunning(a *Actions) bool {
	a.batch.mu.RLock()
	defer a.batch.mu.RUnlock()
	return a.batch.on
}

// KeptOutcomes is how many outcomes the database could not take wait to
// be written again.
func KeptOutcomes(a *Actions) int { return int(a.kept.Load()) }
