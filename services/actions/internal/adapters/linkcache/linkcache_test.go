package linkcache_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/linkcache"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

const (
	agency = "0b4f5a8e-2f7a-4d55-9d8e-0f3a7c1d2e01"
	other  = "0b4f5a8e-2f7a-4d55-9d8e-0f3a7c1d2e02"
	client = "5c9e1d7a-8b3f-4e21-a6c4-9d2b7e3f1a01"
)

// crm is the CRM as the cache's next directory: the links it holds now,
// and how many times it was asked.
type crm struct {
	mu     sync.Mutex
	linked map[[2]string]action.Client
	asked  int
	// during, if set, runs inside a lookup, after the CRM has answered:
	// an event that arrives while the answer travels back.
	during func()
}

func (c *crm) LinkedClient(_ context.Context, agencyID, clientID string) (action.Client, bool, error) {
	c.mu.Lock()
	cl, ok := c.linked[[2]string{agencyID, clientID}]
	c.asked++
	during := c.during
	c.during = nil
	c.mu.Unlock()
	if during != nil {
		during()
	}
	return cl, ok, nil
}

func (c *crm) AgencyExists(context.Context, string) (bool, error) { return true, nil }

func (c *crm) link(agencyID, clientID, status string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.linked[[2]string{agencyID, clientID}] = action.Client{ID: clientID, Status: status}
}

func (c *crm) unlink(agencyID, clientID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.linked, [2]string{agencyID, clientID})
}

func (c *crm) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asked
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func setup(t *testing.T) (*crm, *clock, *linkcache.Directory) {
	t.Helper()
	c := &crm{linked: map[[2]string]action.Client{}}
	c.link(agency, client, "active")
	clk := &clock{t: time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)}
	d := linkcache.New(c, 5*time.Second, clk.now)
	d.Listening()
	return c, clk, d
}

func linked(t *testing.T, d *linkcache.Directory, agencyID string) (action.Client, bool) {
	t.Helper()
	cl, ok, err := d.LinkedClient(t.Context(), agencyID, client)
	if err != nil {
		t.Fatal(err)
	}
	return cl, ok
}

// publish delivers an event as the subscription would, from its typed
// definition (the subject and payload the CRM publishes).
func publish[P any](t *testing.T, d *linkcache.Directory, def *events.Def[P], p P) {
	t.Helper()
	subject, data, err := def.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Handle(subject, data) {
		t.Fatalf("Handle(%s) refused the CRM's own event", subject)
	}
}

func TestABurstForOneClientAsksTheCRMOnce(t *testing.T) {
	c, _, d := setup(t)
	for range 100 {
		if _, ok := linked(t, d, agency); !ok {
			t.Fatal("a linked client was refused")
		}
	}
	if n := c.calls(); n != 1 {
		t.Fatalf("the CRM was asked %d times for 100 submissions within the TTL, want 1", n)
	}
}

func TestAnUnlinkedClientIsRefusedAtOnceAfterTheEvent(t *testing.T) {
	c, _, d := setup(t)
	linked(t, d, agency)
	c.unlink(agency, client)
	publish(t, d, events.ClientUnlinked, events.LinkEvent{AgencyID: agency, ClientID: client, At: time.Now()})
	if _, ok := linked(t, d, agency); ok {
		t.Fatal("the client was still admitted after its unlink event")
	}
}

func TestAnUnlinkFromOneAgencyLeavesTheOthersLink(t *testing.T) {
	c, _, d := setup(t)
	c.link(other, client, "active")
	linked(t, d, agency)
	linked(t, d, other)
	c.unlink(agency, client)
	publish(t, d, events.ClientUnlinked, events.LinkEvent{AgencyID: agency, ClientID: client, At: time.Now()})
	before := c.calls()
	if _, ok := linked(t, d, other); !ok || c.calls() != before {
		t.Fatalf("the other agency's link: ok %v, CRM asked %d more times; want it kept in memory", ok, c.calls()-before)
	}
}

func TestAClientsChangeAppliesAtOnce(t *testing.T) {
	c, _, d := setup(t)
	linked(t, d, agency)
	c.link(agency, client, "paused")
	publish(t, d, events.ClientUpdated, events.ClientEvent{ID: client, At: time.Now()})
	if cl, _ := linked(t, d, agency); cl.Status != "paused" {
		t.Fatalf("status after the client's update event = %q, want paused", cl.Status)
	}
}

func TestAMissedEventIsBoundedByTheTTL(t *testing.T) {
	c, clk, d := setup(t)
	linked(t, d, agency)
	c.unlink(agency, client) // its event never arrives
	clk.t = clk.t.Add(5 * time.Second)
	if _, ok := linked(t, d, agency); ok {
		t.Fatal("the client was admitted after the TTL although the CRM has unlinked it")
	}
}

func TestAnAnswerFetchedAcrossAnEventIsNotKept(t *testing.T) {
	c, _, d := setup(t)
	// The CRM answers "linked"; before the answer is stored, the client
	// is unlinked and its event arrives.
	c.during = func() {
		c.unlink(agency, client)
		publish(t, d, events.ClientUnlinked, events.LinkEvent{AgencyID: agency, ClientID: client, At: time.Now()})
	}
	if _, ok := linked(t, d, agency); !ok {
		t.Fatal("the first answer, given before the unlink, should stand")
	}
	if _, ok := linked(t, d, agency); ok {
		t.Fatal("the stale answer was kept: the client was admitted after its unlink event")
	}
}

func TestNothingIsRememberedWhileEventsMayBeMissed(t *testing.T) {
	c, _, d := setup(t)
	linked(t, d, agency)
	d.Deaf() // the NATS connection is lost
	c.unlink(agency, client)
	if _, ok := linked(t, d, agency); ok {
		t.Fatal("the client was admitted from memory while events could be missed")
	}
	c.link(agency, client, "active")
	linked(t, d, agency)
	c.unlink(agency, client)
	d.Listening() // back, but what happened meanwhile was not heard
	if _, ok := linked(t, d, agency); ok {
		t.Fatal("the client was admitted from an answer kept across the outage")
	}
}

func TestNotLinkedIsAskedEveryTime(t *testing.T) {
	c, _, d := setup(t)
	if _, ok := linked(t, d, other); ok {
		t.Fatal("an unlinked client was admitted")
	}
	c.link(other, client, "active")
	if _, ok := linked(t, d, other); !ok {
		t.Fatal("a client linked a moment ago was refused: a refusal was remembered")
	}
}

func TestAnUnreadableEventForgetsEverything(t *testing.T) {
	c, _, d := setup(t)
	linked(t, d, agency)
	c.unlink(agency, client)
	if d.Handle(events.ClientUnlinked.Filter(), []byte(`{"agency_id": 7}`)) {
		t.Fatal("Handle accepted a malformed event")
	}
	if _, ok := linked(t, d, agency); ok {
		t.Fatal("after an unreadable unlink event the client was still admitted from memory")
	}
}

func TestZeroTTLAsksEveryTime(t *testing.T) {
	c := &crm{linked: map[[2]string]action.Client{}}
	c.link(agency, client, "active")
	d := linkcache.New(c, 0, time.Now)
	d.Listening()
	linked(t, d, agency)
	linked(t, d, agency)
	if n := c.calls(); n != 2 {
		t.Fatalf("with the cache off the CRM was asked %d times for 2 submissions, want 2", n)
	}
}
