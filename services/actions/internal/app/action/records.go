package action

// WriteMode says how a record write treats existing rows.
type WriteMode int

const (
	// Upsert inserts rows, replacing any with the same id.
	Upsert WriteMode = iota + 1
	// Update replaces only rows that exist.
	Update
)

// RecordWrite is rows for one dataset of the run's client.
type RecordWrite struct {
	Resource string           `json:"resource"`
	Mode     WriteMode        `json:"mode"`
	Rows     []map[string]any `json:"rows"`
}
