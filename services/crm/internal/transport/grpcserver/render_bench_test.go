package grpcserver

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

func BenchmarkRenderProspects(b *testing.B) {
	at := time.Date(2026, 11, 1, 9, 30, 0, 123_456_000, time.UTC)
	ps := make([]app.Prospect, 50)
	for i := range ps {
		ps[i] = app.Prospect{ID: fmt.Sprintf("019a4b2c-3d4e-7f60-8a9b-%012d", i), BusinessName: fmt.Sprintf("Prospect %d Bakery & Co", i),
			WebsiteURL: fmt.Sprintf("https://www.prospect-%d.example/home", i), Domain: "www.prospect.example", Industry: "restaurants",
			HealthScore: 64.5, LeadScore: 81, PipelineStage: "qualified", CreatedAt: at, UpdatedAt: at}
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = renderProspects(ps)
	}
}

// BenchmarkEncodingJSONProspects is what the floor pays for the same page.
func BenchmarkEncodingJSONProspects(b *testing.B) {
	at := time.Date(2026, 11, 1, 9, 30, 0, 123_456_000, time.UTC)
	type prospect struct {
		ID            string    `json:"id"`
		BusinessName  string    `json:"business_name"`
		WebsiteURL    string    `json:"website_url"`
		Domain        string    `json:"domain"`
		Industry      string    `json:"industry"`
		HealthScore   float64   `json:"health_score"`
		LeadScore     float64   `json:"lead_score"`
		PipelineStage string    `json:"pipeline_stage"`
		CreatedAt     time.Time `json:"created_at"`
		UpdatedAt     time.Time `json:"updated_at"`
	}
	ps := make([]prospect, 50)
	for i := range ps {
		ps[i] = prospect{ID: fmt.Sprintf("019a4b2c-3d4e-7f60-8a9b-%012d", i), BusinessName: fmt.Sprintf("Prospect %d Bakery & Co", i),
			WebsiteURL: fmt.Sprintf("https://www.prospect-%d.example/home", i), Domain: "www.prospect.example", Industry: "restaurants",
			HealthScore: 64.5, LeadScore: 81, PipelineStage: "qualified", CreatedAt: at, UpdatedAt: at}
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = json.Marshal(struct {
			Data []prospect `json:"data"`
		}{ps})
	}
}
