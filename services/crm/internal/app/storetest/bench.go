package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

// BenchmarkLists measures the list queries of the CRM interface on one
// adapter: the first page (50) and a deep page (offset 4,000) of an agency
// holding 5,000 prospects, among 5 agencies of that size.
func BenchmarkLists(b *testing.B, s app.Store) {
	ctx := b.Context()
	var target string
	for a := range 5 {
		ag := app.Agency{ID: uuid.Must(uuid.NewV7()).String(), Name: fmt.Sprint("A", a), CreatedAt: base, UpdatedAt: base}
		if a == 0 {
			target = ag.ID
		}
		err := s.InTx(ctx, func(tx app.Tx) error {
			if err := tx.InsertAgency(ctx, ag); err != nil {
				return err
			}
			for i := range 5000 {
				at := base.Add(time.Duration(i) * time.Second)
				if err := tx.InsertProspect(ctx, app.Prospect{ID: uuid.Must(uuid.NewV7()).String(), AgencyID: ag.ID,
					BusinessName: fmt.Sprint("P", i), WebsiteURL: "https://p.example", Domain: "p.example",
					PipelineStage: "new", CreatedAt: at, UpdatedAt: at}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		page pagination.Page
	}{{"first-page", pagination.Page{Limit: 50}}, {"offset-4000", pagination.Page{Limit: 50, Offset: 4000}}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				rows, err := s.Prospects(ctx, target, bc.page)
				if err != nil || len(rows) != 50 {
					b.Fatalf("%d rows, %v", len(rows), err)
				}
			}
		})
	}
}
