package atrium

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const eventStreamPath = "/api/v1/event-stream"

// ListenIdle is how long Listen waits for a line (the stream sends a
// heartbeat every 15 seconds when idle) before it takes the stream for
// dead and ends with an error.
const ListenIdle = time.Minute

// maxStreamLine bounds one line of the event stream.
const maxStreamLine = 4 << 20

// StreamedEvent is one line of the event stream (Listen): an event, or a
// heartbeat, whose Heartbeat is set and the rest empty.
type StreamedEvent struct {
	// Heartbeat is when the service sent a heartbeat: the first line,
	// once the stream is live (events from then on come), and then one
	// whenever no event came for a while.
	Heartbeat time.Time
	// The event: Raw is its body as a webhook delivery carries it
	// ({"type", "timestamp", "data"}), and ID its webhook-id.
	WebhookEvent
}

// Listen opens the event stream (GET /api/v1/event-stream): the key's
// tenants' events as they happen, those events matches (event types,
// prefixes followed by .*, or *; none is every event). It yields each
// line until ctx ends (then it stops without an error), or the stream
// fails or ends, which it yields as an error, last: a 400 for a bad
// filter (an *Error), or the stream's end. It is not retried: a caller
// that wants to keep listening opens it again (events in between are
// missed; the stream is live, not a log).
func (s *WebhooksService) Listen(ctx context.Context, events []string) iter.Seq2[StreamedEvent, error] {
	return func(yield func(StreamedEvent, error) bool) {
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		body, err := s.t.openStream(ctx, events)
		if err != nil {
			if ctx.Err() == nil {
				yield(StreamedEvent{}, err)
			}
			return
		}
		defer body.Close()
		// No line for ListenIdle: the connection is gone without a word.
		idle := time.AfterFunc(ListenIdle, func() {
			cancel(fmt.Errorf("atrium: the event stream sent nothing for %s (not even a heartbeat)", ListenIdle))
		})
		defer idle.Stop()
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 64<<10), maxStreamLine)
		for sc.Scan() {
			idle.Reset(ListenIdle)
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			ev, err := parseStreamLine(line)
			if !yield(ev, err) || err != nil {
				return
			}
		}
		err = sc.Err()
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			err = cause
		} else if ctx.Err() != nil {
			return // the caller stopped
		}
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		yield(StreamedEvent{}, fmt.Errorf("atrium: the event stream ended: %w", err))
	}
}

// openStream sends the stream's request and returns its body once it
// answered 200.
func (t *transport) openStream(ctx context.Context, events []string) (io.ReadCloser, error) {
	u := t.base + eventStreamPath
	if len(events) > 0 {
		u += "?" + url.Values{"events": {strings.Join(events, ",")}}.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("atrium: GET %s: %w", eventStreamPath, err)
	}
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	req.Header.Set("User-Agent", t.userAgent)
	req.Header.Set("Accept", "application/x-ndjson, application/json")
	// Not t.http's timeout-bound call: the stream lives until ctx ends.
	resp, err := t.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("atrium: GET %s: %w", eventStreamPath, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, newError(http.MethodGet, eventStreamPath, resp, b)
	}
	return resp.Body, nil
}

// parseStreamLine reads {"result": {"event": ...} | {"heartbeat": ...}}
// or {"error": message}.
func parseStreamLine(line []byte) (StreamedEvent, error) {
	var l struct {
		Result *struct {
			Heartbeat *time.Time `json:"heartbeat"`
			Event     *struct {
				ID        string          `json:"id"`
				Type      string          `json:"type"`
				Timestamp string          `json:"timestamp"`
				Data      json.RawMessage `json:"data"`
			} `json:"event"`
		} `json:"result"`
		Error *string `json:"error"`
	}
	if err := json.Unmarshal(line, &l); err != nil {
		return StreamedEvent{}, fmt.Errorf("atrium: the event stream sent a line that is not JSON: %w", err)
	}
	switch {
	case l.Error != nil:
		return StreamedEvent{}, fmt.Errorf("atrium: the event stream ended: %s", *l.Error)
	case l.Result != nil && l.Result.Heartbeat != nil:
		return StreamedEvent{Heartbeat: *l.Result.Heartbeat}, nil
	case l.Result != nil && l.Result.Event != nil:
		e := l.Result.Event
		at, err := time.Parse(time.RFC3339Nano, e.Timestamp)
		if err != nil {
			return StreamedEvent{}, fmt.Errorf("atrium: event %s has a timestamp that is not RFC 3339: %q", e.ID, e.Timestamp)
		}
		var data map[string]any
		if err := json.Unmarshal(e.Data, &data); err != nil {
			return StreamedEvent{}, fmt.Errorf("atrium: event %s has data that is not a JSON object: %w", e.ID, err)
		}
		// The body a webhook delivery of the event would carry.
		raw, err := json.Marshal(struct {
			Type      string          `json:"type"`
			Timestamp string          `json:"timestamp"`
			Data      json.RawMessage `json:"data"`
		}{e.Type, e.Timestamp, e.Data})
		if err != nil {
			return StreamedEvent{}, fmt.Errorf("atrium: event %s: %w", e.ID, err)
		}
		return StreamedEvent{WebhookEvent: WebhookEvent{ID: e.ID, Type: e.Type, Timestamp: at, Data: data, Raw: raw}}, nil
	}
	return StreamedEvent{}, fmt.Errorf("atrium: the event stream sent a line that is neither an event, a heartbeat nor an error: %.200s", line)
}
