package app

import (
	"context"
	"errors"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/value"
)

// listPolicy is the CRM list rule of the spec: default 50, capped at 200.
var listPolicy = pagination.Policy{DefaultLimit: 50, MaxLimit: 200, Clamp: true}

// Pipeline is the agency's sales pipeline: prospect reports and deals,
// listed to API keys and written by administrators.
type Pipeline struct {
	store PipelineStore
	clock Clock
}

// PipelineStore is the store as Pipeline uses it.
type PipelineStore interface {
	PipelineReader
	InTx(ctx context.Context, fn func(PipelineTx) error) error
}

// PipelineReader is what Pipeline reads outside transactions: the lists
// API keys read, one agency at a time.
type PipelineReader interface {
	// Prospects lists an agency's prospects by updated_at descending, then
	// id descending.
	Prospects(ctx context.Context, agencyID string, page pagination.Page) ([]Prospect, error)
	// Deals lists an agency's deals by updated_at descending, then id
	// descending.
	Deals(ctx context.Context, agencyID string, page pagination.Page) ([]Deal, error)
}

// PipelineTx is a transaction as Pipeline uses it (see Tx for what its
// getters lock).
type PipelineTx interface {
	Agency(ctx context.Context, id string) (Agency, error)
	// Member is read to check a deal's owner.
	Member(ctx context.Context, agencyID, id string) (Member, error)
	Prospect(ctx context.Context, agencyID, id string) (Prospect, error)
	Deal(ctx context.Context, agencyID, id string) (Deal, error)
	InsertProspect(ctx context.Context, p Prospect) error
	UpdateProspect(ctx context.Context, p Prospect) error
	InsertDeal(ctx context.Context, d Deal) error
	UpdateDeal(ctx context.Context, d Deal) error
	// Enqueue adds an event to the outbox; the relay publishes it to NATS
	// after the transaction commits.
	outbox.Enqueuer
}

// NewPipeline returns the pipeline use cases.
func NewPipeline(store PipelineStore, clock Clock) *Pipeline {
	return &Pipeline{store: store, clock: clock}
}

// ListProspects lists an agency's prospects, most recently updated first.
func (p *Pipeline) ListProspects(ctx context.Context, agencyID string, limit, offset *int32) ([]Prospect, error) {
	page, err := listPolicy.Parse(limit, offset)
	if err != nil {
		return nil, err
	}
	return p.store.Prospects(ctx, agencyID, page)
}

// ListDeals lists the deals owned by an agency's members, most recently
// updated first.
func (p *Pipeline) ListDeals(ctx context.Context, agencyID string, limit, offset *int32) ([]Deal, error) {
	page, err := listPolicy.Parse(limit, offset)
	if err != nil {
		return nil, err
	}
	return p.store.Deals(ctx, agencyID, page)
}

// names are the names of the fields f gives, for the audit trail.
func (f ProspectFields) names() []string {
	var out []string
	for _, n := range []struct {
		name  string
		given bool
	}{{"business_name", f.BusinessName != nil}, {"website_url", f.WebsiteURL != nil}, {"domain", f.Domain != nil}, {"industry", f.Industry != nil},
		{"health_score", f.HealthScore != nil}, {"lead_score", f.LeadScore != nil}, {"pipeline_stage", f.PipelineStage != nil}} {
		if n.given {
			out = append(out, n.name)
		}
	}
	return out
}

// names are the names of the fields f gives, for the audit trail.
func (f DealFields) names() []string {
	var out []string
	for _, n := range []struct {
		name  string
		given bool
	}{{"owner_member_id", f.OwnerMemberID != nil}, {"title", f.Title != nil}, {"stage", f.Stage != nil}, {"value", f.Value != nil},
		{"currency", f.Currency != nil}, {"expected_close_date", f.ExpectedCloseDate != nil}, {"closed_at", f.ClosedAt != nil}} {
		if n.given {
			out = append(out, n.name)
		}
	}
	return out
}

// ProspectFields are the writable fields of a prospect. On update, nil
// fields are kept.
type ProspectFields struct {
	BusinessName  *string
	WebsiteURL    *string
	Domain        *string
	Industry      *string
	HealthScore   *float64
	LeadScore     *float64
	PipelineStage *string
}

// apply validates f and merges it into pr. When the website changes and no
// domain is given, the domain follows the website's host.
func (f ProspectFields) apply(pr *Prospect) error {
	var err error
	if f.BusinessName != nil {
		if pr.BusinessName, err = value.Line("business_name", *f.BusinessName, maxName, false); err != nil {
			return err
		}
	}
	if f.WebsiteURL != nil {
		var host string
		if pr.WebsiteURL, host, err = httpURL("website_url", *f.WebsiteURL); err != nil {
			return err
		}
		if f.Domain == nil || *f.Domain == "" {
			if pr.Domain, err = hostname("domain", host); err != nil {
				return apperr.Invalid("website_url's host %q is not a host name such as example.com; send domain explicitly", host)
			}
		}
	}
	if f.Domain != nil && *f.Domain != "" {
		if pr.Domain, err = hostname("domain", *f.Domain); err != nil {
			return err
		}
	}
	if f.Industry != nil {
		if pr.Industry, err = value.Line("industry", *f.Industry, maxName, true); err != nil {
			return err
		}
	}
	if f.HealthScore != nil {
		if pr.HealthScore, err = score("health_score", *f.HealthScore); err != nil {
			return err
		}
	}
	if f.LeadScore != nil {
		if pr.LeadScore, err = score("lead_score", *f.LeadScore); err != nil {
			return err
		}
	}
	if f.PipelineStage != nil {
		if pr.PipelineStage, err = oneOf("pipeline_stage", *f.PipelineStage, PipelineStages); err != nil {
			return err
		}
	}
	return nil
}

// CreateProspect adds a prospect to an agency. business_name and website_url
// are required; the domain defaults to the website's host and the stage to
// new.
func (p *Pipeline) CreateProspect(ctx context.Context, agencyID string, f ProspectFields) (Prospect, error) {
	agencyID, err := value.PathID("agency", agencyID)
	if err != nil {
		return Prospect{}, err
	}
	if f.BusinessName == nil {
		f.BusinessName = new(string)
	}
	if f.WebsiteURL == nil {
		f.WebsiteURL = new(string)
	}
	if f.PipelineStage == nil || *f.PipelineStage == "" {
		f.PipelineStage = new(PipelineStages[0])
	}
	pr := Prospect{ID: newID(), AgencyID: agencyID}
	if err := f.apply(&pr); err != nil {
		return Prospect{}, err
	}
	pr.CreatedAt = p.clock.Now()
	pr.UpdatedAt = pr.CreatedAt
	err = p.store.InTx(ctx, func(tx PipelineTx) error {
		if _, err := tx.Agency(ctx, agencyID); err != nil {
			return notFound(err, "agency %q not found", agencyID)
		}
		if err := tx.InsertProspect(ctx, pr); err != nil {
			return err
		}
		if err := outbox.Add(ctx, tx, events.ProspectCreated, events.RecordEvent{ID: pr.ID, AgencyID: agencyID, At: pr.UpdatedAt}, pr.UpdatedAt); err != nil {
			return err
		}
		return audit.Record(ctx, tx, "crm", audit.Change{Action: "prospect.created", ResourceType: "prospect", ResourceID: pr.ID,
			Fields: f.names(), AgencyID: agencyID}, pr.UpdatedAt)
	})
	return pr, err
}

// UpdateProspect changes the given fields of a prospect.
func (p *Pipeline) UpdateProspect(ctx context.Context, agencyID, id string, f ProspectFields) (Prospect, error) {
	agencyID, err := value.PathID("agency", agencyID)
	if err != nil {
		return Prospect{}, err
	}
	if id, err = value.PathID("prospect", id); err != nil {
		return Prospect{}, err
	}
	var pr Prospect
	err = p.store.InTx(ctx, func(tx PipelineTx) error {
		if pr, err = tx.Prospect(ctx, agencyID, id); err != nil {
			return notFound(err, "prospect %q not found in agency %q", id, agencyID)
		}
		if err := f.apply(&pr); err != nil {
			return err
		}
		pr.UpdatedAt = p.clock.Now()
		if err := tx.UpdateProspect(ctx, pr); err != nil {
			return err
		}
		if err := outbox.Add(ctx, tx, events.ProspectUpdated, events.RecordEvent{ID: pr.ID, AgencyID: agencyID, At: pr.UpdatedAt}, pr.UpdatedAt); err != nil {
			return err
		}
		return audit.Record(ctx, tx, "crm", audit.Change{Action: "prospect.updated", ResourceType: "prospect", ResourceID: pr.ID,
			Fields: f.names(), AgencyID: agencyID}, pr.UpdatedAt)
	})
	return pr, err
}

// DealFields are the writable fields of a deal. On update, nil fields are
// kept.
type DealFields struct {
	OwnerMemberID     *string
	Title             *string
	Stage             *string
	Value             *float64
	Currency          *string
	ExpectedCloseDate *string
	// ClosedAt backdates the close of a deal created as won or lost.
	ClosedAt *time.Time
}

func (f DealFields) apply(d *Deal) error {
	var err error
	if f.OwnerMemberID != nil {
		if d.OwnerMemberID, err = value.BodyID("owner_member_id", *f.OwnerMemberID); err != nil {
			return err
		}
	}
	if f.Title != nil {
		if d.Title, err = value.Line("title", *f.Title, maxName, false); err != nil {
			return err
		}
	}
	if f.Stage != nil {
		if d.Stage, err = oneOf("stage", *f.Stage, DealStages); err != nil {
			return err
		}
	}
	if f.Value != nil {
		if d.Value, err = money(*f.Value); err != nil {
			return err
		}
	}
	if f.Currency != nil {
		if d.Currency, err = currency(*f.Currency); err != nil {
			return err
		}
	}
	if f.ExpectedCloseDate != nil {
		if d.ExpectedCloseDate, err = date("expected_close_date", *f.ExpectedCloseDate); err != nil {
			return err
		}
	}
	return nil
}

// CreateDeal adds a deal owned by a member of the agency.
func (p *Pipeline) CreateDeal(ctx context.Context, agencyID string, f DealFields) (Deal, error) {
	agencyID, err := value.PathID("agency", agencyID)
	if err != nil {
		return Deal{}, err
	}
	for _, req := range []struct {
		field string
		v     *string
	}{{"owner_member_id", f.OwnerMemberID}, {"title", f.Title}, {"currency", f.Currency}, {"expected_close_date", f.ExpectedCloseDate}} {
		if req.v == nil || *req.v == "" {
			return Deal{}, apperr.Invalid("%s is required", req.field)
		}
	}
	if f.Stage == nil || *f.Stage == "" {
		f.Stage = new(DealStages[0])
	}
	if f.Value == nil {
		f.Value = new(float64)
	}
	d := Deal{ID: newID(), AgencyID: agencyID}
	if err := f.apply(&d); err != nil {
		return Deal{}, err
	}
	now := p.clock.Now()
	d.CreatedAt, d.UpdatedAt = now, now
	switch {
	case f.ClosedAt != nil && !dealClosed(d.Stage):
		return Deal{}, apperr.Invalid("closed_at may be set only for a deal whose stage is won or lost; stage is %q", d.Stage)
	case f.ClosedAt != nil:
		at := f.ClosedAt.UTC().Truncate(time.Microsecond)
		if at.After(now) {
			return Deal{}, apperr.Invalid("closed_at must not be in the future; got %s", at.Format(time.RFC3339))
		}
		d.ClosedAt = &at
	case dealClosed(d.Stage):
		d.ClosedAt = &now
	}
	err = p.store.InTx(ctx, func(tx PipelineTx) error {
		if _, err := tx.Agency(ctx, agencyID); err != nil {
			return notFound(err, "agency %q not found", agencyID)
		}
		if err := p.checkOwner(ctx, tx, agencyID, d.OwnerMemberID); err != nil {
			return err
		}
		if err := tx.InsertDeal(ctx, d); err != nil {
			return err
		}
		if err := outbox.Add(ctx, tx, events.DealCreated, events.RecordEvent{ID: d.ID, AgencyID: agencyID, At: now}, now); err != nil {
			return err
		}
		return audit.Record(ctx, tx, "crm", audit.Change{Action: "deal.created", ResourceType: "deal", ResourceID: d.ID,
			Fields: f.names(), AgencyID: agencyID}, now)
	})
	return d, err
}

func (p *Pipeline) checkOwner(ctx context.Context, tx PipelineTx, agencyID, memberID string) error {
	if _, err := tx.Member(ctx, agencyID, memberID); err != nil {
		if errors.Is(err, ErrNotFound) {
			return apperr.Invalid("owner_member_id %q is not a member of agency %q", memberID, agencyID)
		}
		return err
	}
	return nil
}

// UpdateDeal changes the given fields of a deal. Entering won or lost sets
// closed_at to now; leaving them clears it.
func (p *Pipeline) UpdateDeal(ctx context.Context, agencyID, id string, f DealFields) (Deal, error) {
	agencyID, err := value.PathID("agency", agencyID)
	if err != nil {
		return Deal{}, err
	}
	if id, err = value.PathID("deal", id); err != nil {
		return Deal{}, err
	}
	if f.ClosedAt != nil {
		return Deal{}, apperr.Invalid("closed_at cannot be set on update; it follows the stage")
	}
	var d Deal
	err = p.store.InTx(ctx, func(tx PipelineTx) error {
		if d, err = tx.Deal(ctx, agencyID, id); err != nil {
			return notFound(err, "deal %q not found in agency %q", id, agencyID)
		}
		wasClosed := dealClosed(d.Stage)
		if err := f.apply(&d); err != nil {
			return err
		}
		if f.OwnerMemberID != nil {
			if err := p.checkOwner(ctx, tx, agencyID, d.OwnerMemberID); err != nil {
				return err
			}
		}
		now := p.clock.Now()
		switch closed := dealClosed(d.Stage); {
		case closed && !wasClosed:
			d.ClosedAt = &now
		case !closed:
			d.ClosedAt = nil
		}
		d.UpdatedAt = now
		if err := tx.UpdateDeal(ctx, d); err != nil {
			return err
		}
		if err := outbox.Add(ctx, tx, events.DealUpdated, events.RecordEvent{ID: d.ID, AgencyID: agencyID, At: now}, now); err != nil {
			return err
		}
		return audit.Record(ctx, tx, "crm", audit.Change{Action: "deal.updated", ResourceType: "deal", ResourceID: d.ID,
			Fields: f.names(), AgencyID: agencyID}, now)
	})
	return d, err
}
