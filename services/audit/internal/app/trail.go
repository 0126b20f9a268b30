package app

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/value"
)

// Paging of the trail.
const (
	DefaultPage = 50
	MaxPage     = 200
)

var page = pagination.Policy{DefaultLimit: DefaultPage, MaxLimit: MaxPage}

// Scope is whose events a read may see: an agency's (its objects and its
// sites'), a site's, or every tenant's (both empty: the operator).
type Scope struct {
	AgencyID, SiteID string
}

// Query is a read of the trail as the caller sent it.
type Query struct {
	Actor, ResourceType, ResourceID string
	// Action is an action (item.updated) or an action prefix ending in a
	// dot (item.), "" for every action.
	Action string
	// Since and Until are RFC 3339 times, "" for no bound.
	Since, Until string
	Cursor       string
	Limit        *int32
}

// Page is a page of the trail and the cursor of the next, "" on the last.
type Page struct {
	Events []Event
	Next   string
}

// Trail is the trail's reads.
type Trail struct {
	Store Store
}

// Longest values of the filters: ids, names and "admin" are far shorter.
const (
	maxActor        = 200
	maxResourceType = 64
	maxResourceID   = 200
	maxAction       = 64
)

// List returns a page of the events scope may see that q selects, newest
// first.
func (tr *Trail) List(ctx context.Context, scope Scope, q Query) (Page, error) {
	f := Filter{AgencyID: scope.AgencyID, SiteID: scope.SiteID}
	var err error
	if f.Actor, err = filterText("actor", q.Actor, maxActor); err != nil {
		return Page{}, err
	}
	if f.ResourceType, err = filterText("resource_type", q.ResourceType, maxResourceType); err != nil {
		return Page{}, err
	}
	if f.ResourceID, err = filterText("resource_id", q.ResourceID, maxResourceID); err != nil {
		return Page{}, err
	}
	if f.Action, err = filterText("action", q.Action, maxAction); err != nil {
		return Page{}, err
	}
	if f.Since, err = timeParam("since", q.Since); err != nil {
		return Page{}, err
	}
	if f.Until, err = timeParam("until", q.Until); err != nil {
		return Page{}, err
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return Page{}, apperr.Invalid("since must be before until; got since %s and until %s",
			f.Since.Format(time.RFC3339Nano), f.Until.Format(time.RFC3339Nano))
	}
	pg, err := page.Parse(q.Limit, nil)
	if err != nil {
		return Page{}, err
	}
	f.Limit = int(pg.Limit) + 1 // one more says whether a next page exists
	params := []string{scope.AgencyID, scope.SiteID, f.Actor, f.ResourceType, f.ResourceID, q.Since, q.Until}
	if f.Action != "" {
		// Only when set: the cursors of reads without it, made before the
		// filter existed, stay good.
		params = append(params, f.Action)
	}
	if q.Cursor != "" {
		pos, err := pagination.ReadCursor(q.Cursor, "the filters", params...)
		if err != nil {
			return Page{}, err
		}
		p, ok := readPosition(pos)
		if !ok {
			return Page{}, apperr.Invalid("cursor is malformed: send back next_cursor exactly as received, or no cursor for the first page")
		}
		f.After = &p
	}
	evs, err := tr.Store.Events(ctx, f)
	if err != nil {
		return Page{}, err
	}
	out := Page{Events: evs}
	if len(evs) > int(pg.Limit) {
		out.Events = evs[:pg.Limit]
		last := out.Events[len(out.Events)-1]
		out.Next = pagination.Cursor(position(Position{At: last.At, ID: last.ID}), params...)
	}
	return out, nil
}

// filterText reads a filter's value: one line of at most max characters.
func filterText(field, s string, max int) (string, error) {
	if s == "" {
		return "", nil
	}
	if !value.Text(s, max, value.OneLine) {
		return "", apperr.Invalid("%s must be one line of at most %d characters; got %s", field, max, value.Describe(s))
	}
	return s, nil
}

func timeParam(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	ts := value.Rule{Kind: value.Timestamp}
	v, ok := ts.CheckString(s)
	if !ok {
		return time.Time{}, ts.Invalid(field, s)
	}
	return v.Time.UTC(), nil
}

// The range of a cursor's time, in microseconds since the epoch.
var (
	minPosition = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	maxPosition = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()
)

// position and readPosition write and read a page's end: the time in
// microseconds since the epoch, a slash, the id.
func position(p Position) string {
	return strconv.FormatInt(p.At.UnixMicro(), 10) + "/" + p.ID
}

func readPosition(s string) (Position, bool) {
	at, id, ok := strings.Cut(s, "/")
	if !ok || id == "" {
		return Position{}, false
	}
	us, err := strconv.ParseInt(at, 10, 64)
	// A cursor is not signed: a time no event can have (before year 1 or
	// after 9999, outside what the stores keep) is a malformed one.
	if err != nil || us < minPosition || us > maxPosition {
		return Position{}, false
	}
	return Position{At: time.UnixMicro(us).UTC(), ID: id}, true
}
