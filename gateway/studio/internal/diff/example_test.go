package diff_test

import (
	"fmt"

	"github.com/atrium-hq/atrium/gateway/studio/internal/diff"
)

// Two revisions of an item, in the collection's field order. A page shows
// each changed field with f.HTML() and serves diff.CSS with its styles.
func ExampleFields() {
	before := map[string]any{"title": "Rye", "price": 4.5, "body": "Baked daily.\nClosed on Sundays."}
	after := map[string]any{"title": "Rye", "price": 5.0, "body": "Baked daily.\nOpen on Sundays."}
	for _, f := range diff.Fields(before, after, []string{"title", "body", "price"}) {
		fmt.Println(f.Key, "changed:", f.Changed)
		for _, l := range f.Before {
			if l.Op == diff.Removed {
				fmt.Println("  -", l.Text)
			}
		}
		for _, l := range f.After {
			if l.Op == diff.Added {
				fmt.Println("  +", l.Text)
			}
		}
	}
	// Output:
	// title changed: false
	// body changed: true
	//   - Closed on Sundays.
	//   + Open on Sundays.
	// price changed: true
	//   - 4.5
	//   + 5
}
