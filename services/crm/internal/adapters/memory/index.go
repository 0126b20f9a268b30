package memory

import (
	"cmp"
	"slices"
	"time"

	"github.com/atrium-hq/atrium/platform/memdb"
)

// recentIndex keeps one agency's rows sorted the way lists read them:
// updated_at descending, then id descending. A list is then a slice of the
// index, whatever the agency's size; a write costs a binary search and a
// copy of the tail.
type recentIndex struct {
	rows []indexEntry
}

type indexEntry struct {
	at time.Time
	id string
}

func compareRecent(a, b indexEntry) int {
	if c := b.at.Compare(a.at); c != 0 {
		return c
	}
	return cmp.Compare(b.id, a.id)
}

func (x *recentIndex) insert(e indexEntry) {
	i, _ := slices.BinarySearchFunc(x.rows, e, compareRecent)
	x.rows = slices.Insert(x.rows, i, e)
}

func (x *recentIndex) remove(e indexEntry) {
	if i, found := slices.BinarySearchFunc(x.rows, e, compareRecent); found {
		x.rows = slices.Delete(x.rows, i, i+1)
	}
}

// indexInsert adds e to the agency's index, undone on rollback.
func (t *tx) indexInsert(idx map[string]*recentIndex, agencyID string, e indexEntry) {
	x, ok := idx[agencyID]
	if !ok {
		x = &recentIndex{}
		memdb.Put(t.Tx, idx, agencyID, x)
	}
	x.insert(e)
	t.OnRollback(func() { x.remove(e) })
}

// indexMove re-sorts a row whose updated_at changed, undone on rollback.
func (t *tx) indexMove(idx map[string]*recentIndex, agencyID string, from, to indexEntry) {
	x := idx[agencyID]
	x.remove(from)
	x.insert(to)
	t.OnRollback(func() {
		x.remove(to)
		x.insert(from)
	})
}
