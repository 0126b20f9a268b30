package jetstream

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Live is the event source of event streams (app.EventSource): plain NATS
// subscriptions on the streams' subjects. Every subscriber gets every
// event published from the moment it subscribes, whichever replica it is
// in, which the durable consumers (one delivery per event across the
// replicas) cannot give. A JetStream publish is a NATS publish, so each
// event comes with the Nats-Msg-Id the outbox relay set.
type Live struct {
	NC *nats.Conn
	// Subjects are the subject filters of the consumed streams.
	Subjects []string
}

// Subscribe implements app.EventSource. Each event's time is when it
// arrived: a plain subscription does not see when the stream stored it.
func (l *Live) Subscribe(handle func(id, subject string, payload []byte, at time.Time)) (func(), error) {
	var subs []*nats.Subscription
	stop := func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}
	for _, subj := range l.Subjects {
		s, err := l.NC.Subscribe(subj, func(m *nats.Msg) {
			id := m.Header.Get(jetstream.MsgIDHeader)
			if id == "" {
				return // every event the outbox relays has its id
			}
			handle(id, m.Subject, m.Data, time.Now().UTC())
		})
		if err != nil {
			stop()
			return nil, fmt.Errorf("subscribe to %s: %w", subj, err)
		}
		subs = append(subs, s)
	}
	// The subscriptions are in place once the server has them: after a
	// flush, an event published now reaches them.
	if err := l.NC.Flush(); err != nil {
		stop()
		return nil, errors.Join(errors.New("the NATS server did not confirm the subscriptions"), err)
	}
	return stop, nil
}
