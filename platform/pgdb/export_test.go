package pgdb

// HoldBatches makes db's batch senders wait for release before each batch
// they take from the queue, and tells sizes the size of each batch sent.
func HoldBatches(db *DB, release <-chan struct{}, sizes func(int)) {
	db.group.gate = func() { <-release }
	db.group.sizes = sizes
}

// Queued is how many ExecEvents calls wait for a batch.
func Queued(db *DB) int {
	db.group.mu.Lock()
	defer db.group.mu.Unlock()
	return len(db.group.queue)
}
