package grpcserver

import (
	"github.com/atrium-hq/atrium/platform/render"
	"github.com/atrium-hq/atrium/services/audit/internal/app"
)

// The JSON body of both list routes, rendered from the domain values in
// one pass (platform/render): exactly what the typed response gives
// through the gateway, which TestRenderedMatchesTyped holds it to.

// eventBytes is about what one event takes, to size the buffer once.
const eventBytes = 640

func renderEvents(evs []app.Event, next string) []byte {
	w := render.NewWriter(48 + eventBytes*len(evs))
	optional := func(k, v string) {
		if v != "" {
			w.Key(k)
			w.String(v)
		}
	}
	w.Open()
	w.Key("audit_events")
	w.OpenArray()
	for i := range evs {
		e := &evs[i]
		w.Open()
		w.Key("id")
		w.String(e.ID)
		w.Key("at")
		w.Time(e.At)
		w.Key("service")
		w.String(e.Service)
		w.Key("action")
		w.String(e.Action)
		w.Key("method")
		w.String(e.Method)
		w.Key("resource_type")
		w.String(e.ResourceType)
		w.Key("resource_id")
		w.String(e.ResourceID)
		w.Key("fields")
		w.OpenArray()
		for _, f := range e.Fields {
			w.String(f)
		}
		w.CloseArray()
		optional("agency_id", e.AgencyID)
		optional("site_id", e.SiteID)
		w.Key("actor")
		w.Open()
		w.Key("kind")
		w.String(e.ActorKind)
		w.Key("id")
		w.String(e.ActorID)
		optional("member_id", e.MemberID)
		optional("session_id", e.SessionID)
		w.Close()
		optional("client_address", e.ClientAddress)
		optional("user_agent", e.UserAgent)
		optional("trace_id", e.TraceID)
		w.Close()
	}
	w.CloseArray()
	optional("next_cursor", next)
	w.Close()
	return w.Bytes()
}
