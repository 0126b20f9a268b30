package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/webhooks/internal/eventtypes"
	"github.com/atrium-hq/atrium/services/webhooks/internal/translate"
)

// EventSource delivers every event of Atrium's streams as it is published,
// to each subscriber (not shared between replicas like the durable
// consumer): an event stream must see its tenant's events whichever
// replica it is connected to.
type EventSource interface {
	// Subscribe calls handle for each event from now until stop is called;
	// the subscription is in place when it returns.
	Subscribe(handle func(id, subject string, payload []byte, at time.Time)) (stop func(), err error)
}

// DefaultListenBuffer is how many events an event stream holds for a
// client that reads slower than they come before it gives up on it.
const DefaultListenBuffer = 256

// ErrListenerBehind ends a stream whose client fell behind: holding events
// for it without bound would let one slow client exhaust the service.
var ErrListenerBehind = errors.New("listener behind")

// Listen opens event streams (ListenEvents): the live events of the
// caller's tenants, filtered by type as a webhook's subscription is.
type Listen struct {
	Source EventSource
	Links  Links
	// Buffer bounds the events held for one stream (DefaultListenBuffer).
	Buffer int
}

// Stream is one open event stream. Events come on C; Done is closed when
// the stream was given up (Err says why).
type Stream struct {
	C    <-chan translate.Event
	Done <-chan struct{}

	owners   Owners
	patterns []string
	links    Links
	stop     func()
	once     sync.Once
	done     chan struct{}
	err      error
}

// Open checks the filter and subscribes. No pattern means every event the
// caller's tenants receive.
func (l *Listen) Open(o Owners, patterns []string) (*Stream, error) {
	if len(o) == 0 {
		return nil, apperr.PermissionDenied("this key is bound to neither a site nor an agency, and events belong to one of them")
	}
	// Each pattern is one entry: the gateway splits the query's
	// comma-separated form (?events=item.*,action_run.*), so that the
	// proto's maximum on the list (max_items, checked before the service
	// sees the request) counts names, not strings of them.
	var split []string
	for _, p := range patterns {
		if p = strings.TrimSpace(p); p != "" {
			split = append(split, p)
		}
	}
	if len(split) == 0 {
		split = []string{"*"}
	}
	kinds := make([]eventtypes.Owner, len(o))
	for i, t := range o {
		kinds[i] = t.Kind
	}
	if err := eventtypes.CheckListen(kinds, split); err != nil {
		return nil, apperr.Invalid("%s", err)
	}
	buffer := l.Buffer
	if buffer <= 0 {
		buffer = DefaultListenBuffer
	}
	c := make(chan translate.Event, buffer)
	s := &Stream{C: c, owners: o, patterns: split, links: l.Links, done: make(chan struct{})}
	s.Done = s.done
	stop, err := l.Source.Subscribe(func(id, subject string, payload []byte, at time.Time) {
		ev, ok, err := translate.Translate(id, subject, payload, at)
		if err != nil || !ok || !s.mayConcern(ev) {
			return // the durable consumer logs what does not translate
		}
		select {
		case c <- ev:
		default:
			s.fail(fmt.Errorf("%w: more than %d events were waiting to be sent; read the stream faster or narrow it with events", ErrListenerBehind, buffer))
		}
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe to the event streams: %w", err)
	}
	s.stop = stop
	return s, nil
}

// mayConcern is the filter applied as each event arrives: its type, and
// its tenant unless that is a client (the agencies it is linked to are
// asked by Wanted, off the subscription's goroutine).
func (s *Stream) mayConcern(ev translate.Event) bool {
	if !slices.ContainsFunc(s.patterns, func(p string) bool { return eventtypes.Matches(p, ev.Type) }) {
		return false
	}
	if ev.Audience.Kind == translate.Client {
		return slices.ContainsFunc(s.owners, func(t Tenant) bool { return t.Kind == eventtypes.Agency })
	}
	return slices.Contains(s.owners, Tenant{Kind: ev.Audience.Kind, ID: ev.Audience.ID})
}

// Wanted reports whether an event that came on C is the caller's: a
// client's event is its agency's when the client is linked to it.
func (s *Stream) Wanted(ctx context.Context, ev translate.Event) (bool, error) {
	if ev.Audience.Kind != translate.Client {
		return true, nil
	}
	agencies, err := s.links.AgenciesOf(ctx, ev.Audience.ID)
	if err != nil {
		return false, fmt.Errorf("event %s: the agencies of client %s: %w", ev.ID, ev.Audience.ID, err)
	}
	return slices.ContainsFunc(s.owners, func(t Tenant) bool { return t.Kind == eventtypes.Agency && slices.Contains(agencies, t.ID) }), nil
}

func (s *Stream) fail(err error) {
	s.once.Do(func() {
		s.err = err
		close(s.done)
	})
}

// Err is why the stream was given up, once Done is closed.
func (s *Stream) Err() error {
	<-s.done
	return s.err
}

// Close unsubscribes.
func (s *Stream) Close() {
	s.stop()
	s.fail(errors.New("closed"))
}
