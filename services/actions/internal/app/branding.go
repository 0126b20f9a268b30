package app

import (
	"context"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/value"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/handlers"
	"github.com/atrium-hq/atrium/services/actions/internal/app/report"
)

// BrandingStore keeps each agency's report branding. It is no part of a
// run's transaction: a report reads it once, as it starts.
type BrandingStore interface {
	// Branding returns the agency's branding; ok false if it set none.
	Branding(ctx context.Context, agencyID string) (b action.Branding, ok bool, err error)
	// PutBranding replaces the agency's branding, enqueueing events in the
	// same transaction (the audit trail's record).
	PutBranding(ctx context.Context, agencyID string, b action.Branding, events ...outbox.Event) error
}

// MaxBrandingName bounds an agency's name on its reports.
const MaxBrandingName = 100

var hexColour = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// Reports are the report use cases: the agencies' branding.
type Reports struct {
	store BrandingStore
	// now stamps the audit trail's records.
	now func() time.Time
}

// NewReports returns the report use cases on st.
func NewReports(st BrandingStore) *Reports { return &Reports{store: st, now: time.Now} }

// DefaultBranding is an agency's branding until it sets its own.
func DefaultBranding() action.Branding {
	return action.Branding{Name: handlers.DefaultAgencyName, Primary: report.DefaultPrimary, Accent: report.DefaultAccent}
}

// GetBranding returns the agency's branding, the defaults if it set none.
func (r *Reports) GetBranding(ctx context.Context, agencyID string) (action.Branding, error) {
	b, ok, err := r.store.Branding(ctx, agencyID)
	if err != nil || !ok {
		return DefaultBranding(), err
	}
	return b, nil
}

// PutBranding checks b and stores it as the agency's: a name of one line
// up to MaxBrandingName characters, colours #rrggbb (absent: the
// defaults), a logo asset's id (a UUID) or none.
func (r *Reports) PutBranding(ctx context.Context, agencyID string, b action.Branding) (action.Branding, error) {
	b.Name = strings.TrimSpace(b.Name)
	switch {
	case b.Name == "":
		return action.Branding{}, apperr.Invalid("name is required: the agency's name as its reports are signed, 1 to %d characters", MaxBrandingName)
	case utf8.RuneCountInString(b.Name) > MaxBrandingName:
		return action.Branding{}, apperr.Invalid("name must be at most %d characters; got %d", MaxBrandingName, utf8.RuneCountInString(b.Name))
	case strings.ContainsFunc(b.Name, func(c rune) bool { return c < 0x20 || c == 0x7f }):
		return action.Branding{}, apperr.Invalid("name must be one line without control characters")
	}
	def := DefaultBranding()
	for _, c := range []struct {
		name string
		v    *string
		def  string
	}{{"colors.primary", &b.Primary, def.Primary}, {"colors.accent", &b.Accent, def.Accent}} {
		if *c.v == "" {
			*c.v = c.def
			continue
		}
		if !hexColour.MatchString(*c.v) {
			return action.Branding{}, apperr.Invalid("%s must be a colour as #rrggbb (six hexadecimal digits, such as #1f3a5f); got %q", c.name, *c.v)
		}
		*c.v = strings.ToLower(*c.v)
	}
	if b.LogoAssetID != "" {
		id, err := value.BodyID("logo_asset_id", b.LogoAssetID)
		if err != nil {
			return action.Branding{}, err
		}
		b.LogoAssetID = id
	}
	fields := []string{"colors", "name"}
	if b.LogoAssetID != "" {
		fields = append(fields, "logo_asset_id")
	}
	e, err := auditEvent(ctx, audit.Change{Action: "branding.set", ResourceType: "branding", ResourceID: agencyID, Fields: fields, AgencyID: agencyID}, r.now())
	if err != nil {
		return action.Branding{}, err
	}
	if err := r.store.PutBranding(ctx, agencyID, b, e); err != nil {
		return action.Branding{}, err
	}
	return b, nil
}

// Branding implements action.BrandingReader for the run engine.
func (r *Reports) Branding(ctx context.Context, agencyID string) (action.Branding, bool, error) {
	return r.store.Branding(ctx, agencyID)
}
