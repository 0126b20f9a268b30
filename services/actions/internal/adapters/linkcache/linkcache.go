package linkcache

import (
	"context"
	"sync"
	"time"

	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// maxEntries bounds the memory of the cache: past it, the cache starts
// again empty (a few seconds of TTL make a larger working set rare, and an
// empty cache is only slower, never wrong).
const maxEntries = 100_000

// Directory is app.ClientDirectory with the linked answers remembered.
type Directory struct {
	next app.ClientDirectory
	ttl  time.Duration
	now  func() time.Time

	mu sync.Mutex
	// links is client id -> agency id -> the answer and when it expires:
	// by client first, since a client's update forgets all its links.
	links map[string]map[string]entry
	size  int
	// gen counts what made entries stale (events, losses of the
	// connection): an answer fetched across a change is not kept.
	gen uint64
	// listening is whether the events reach the cache now; while they do
	// not, nothing is remembered or answered from memory.
	listening bool
}

type entry struct {
	client action.Client
	until  time.Time
}

// New wraps next, remembering a linked answer for ttl (0 turns the cache
// off). The cache answers from memory only between Listening and Deaf.
func New(next app.ClientDirectory, ttl time.Duration, now func() time.Time) *Directory {
	return &Directory{next: next, ttl: ttl, now: now, links: map[string]map[string]entry{}}
}

var _ app.ClientDirectory = (*Directory)(nil)

// LinkedClient implements app.ClientDirectory.
func (d *Directory) LinkedClient(ctx context.Context, agencyID, clientID string) (action.Client, bool, error) {
	if d.ttl <= 0 {
		return d.next.LinkedClient(ctx, agencyID, clientID)
	}
	d.mu.Lock()
	if e, ok := d.links[clientID][agencyID]; ok && d.listening && d.now().Before(e.until) {
		d.mu.Unlock()
		return e.client, true, nil
	}
	gen := d.gen
	d.mu.Unlock()
	c, ok, err := d.next.LinkedClient(ctx, agencyID, clientID)
	if err != nil || !ok {
		return c, ok, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gen != gen || !d.listening {
		return c, true, nil // an event may have made this answer stale
	}
	if d.size >= maxEntries {
		d.clear()
	}
	byAgency := d.links[clientID]
	if byAgency == nil {
		byAgency = map[string]entry{}
		d.links[clientID] = byAgency
	}
	if _, had := byAgency[agencyID]; !had {
		d.size++
	}
	byAgency[agencyID] = entry{client: c, until: d.now().Add(d.ttl)}
	return c, true, nil
}

// AgencyExists implements app.ClientDirectory; it is not remembered (it
// is asked on credit reads, not on submissions).
func (d *Directory) AgencyExists(ctx context.Context, agencyID string) (bool, error) {
	return d.next.AgencyExists(ctx, agencyID)
}

// Unlinked forgets that the client is linked to the agency.
func (d *Directory) Unlinked(agencyID, clientID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	if byAgency, ok := d.links[clientID]; ok {
		if _, had := byAgency[agencyID]; had {
			delete(byAgency, agencyID)
			d.size--
		}
	}
}

// Changed forgets every link of the client, whose settings (status,
// auto_deploy) the remembered answers carry.
func (d *Directory) Changed(clientID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	d.size -= len(d.links[clientID])
	delete(d.links, clientID)
}

// Listening says that the events reach the cache from now on (the
// subscription is in place, or the connection is back): it may answer from
// memory again, starting empty since events may have been missed.
func (d *Directory) Listening() { d.setListening(true) }

// Deaf says that events may be missed from now on (the connection is
// down): the cache forgets everything and asks the CRM every time until
// Listening.
func (d *Directory) Deaf() { d.setListening(false) }

func (d *Directory) setListening(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	d.clear()
	d.listening = on
}

func (d *Directory) clear() {
	clear(d.links)
	d.size = 0
}

// Subjects are the events Handle takes: subscribe to each.
func Subjects() []string {
	return []string{events.ClientUnlinked.Filter(), events.ClientUpdated.Filter()}
}

// Handle applies one of the CRM's client events, as received on subject,
// and reports false for one it cannot read (which it answers by forgetting
// everything, the safe side).
func (d *Directory) Handle(subject string, data []byte) bool {
	if ev, err := events.ClientUnlinked.Parse(subject, data); err == nil && ev.AgencyID != "" && ev.ClientID != "" {
		d.Unlinked(ev.AgencyID, ev.ClientID)
		return true
	}
	if ev, err := events.ClientUpdated.Parse(subject, data); err == nil && ev.ID != "" {
		d.Changed(ev.ID)
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	d.clear()
	return false
}
