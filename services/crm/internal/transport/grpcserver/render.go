package grpcserver

import (
	"github.com/atrium-hq/atrium/platform/render"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

// The JSON bodies of the public list routes, rendered from the domain
// values in one pass (platform/render). They are exactly what the typed
// responses give through the gateway; TestRenderedMatchesTyped holds them
// to it.

// prospectBytes is about what one prospect takes, to size the buffer once.
const prospectBytes = 420

func renderProspects(ps []app.Prospect) []byte {
	w := render.NewWriter(16 + prospectBytes*len(ps))
	w.Open()
	w.Key("data")
	w.OpenArray()
	for i := range ps {
		p := &ps[i]
		w.Open()
		w.Key("id")
		w.String(p.ID)
		w.Key("business_name")
		w.String(p.BusinessName)
		w.Key("website_url")
		w.String(p.WebsiteURL)
		w.Key("domain")
		w.String(p.Domain)
		w.Key("industry")
		w.String(p.Industry)
		w.Key("health_score")
		w.Float(p.HealthScore)
		w.Key("lead_score")
		w.Float(p.LeadScore)
		w.Key("pipeline_stage")
		w.String(p.PipelineStage)
		w.Key("created_at")
		w.Time(p.CreatedAt)
		w.Key("updated_at")
		w.Time(p.UpdatedAt)
		w.Close()
	}
	w.CloseArray()
	w.Close()
	return w.Bytes()
}

const dealBytes = 330

func renderDeals(ds []app.Deal) []byte {
	w := render.NewWriter(16 + dealBytes*len(ds))
	w.Open()
	w.Key("data")
	w.OpenArray()
	for i := range ds {
		d := &ds[i]
		w.Open()
		w.Key("id")
		w.String(d.ID)
		w.Key("title")
		w.String(d.Title)
		w.Key("stage")
		w.String(d.Stage)
		w.Key("value")
		w.Float(d.Value)
		w.Key("currency")
		w.String(d.Currency)
		w.Key("expected_close_date")
		w.String(d.ExpectedCloseDate)
		w.Key("closed_at")
		w.TimeOrNull(d.ClosedAt)
		w.Key("created_at")
		w.Time(d.CreatedAt)
		w.Key("updated_at")
		w.Time(d.UpdatedAt)
		w.Close()
	}
	w.CloseArray()
	w.Close()
	return w.Bytes()
}
