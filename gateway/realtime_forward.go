package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
)

// A realtime stream lives on the gateway that answered its GET; the POST
// that sets its subscriptions may reach another one (a load balancer
// without sticky sessions, or an EventSource reconnecting elsewhere). A
// client id starts with its gateway's prefix, and each gateway answers
// requests for its own streams on NATS at forwardSubject(prefix): the
// gateway that took the POST authenticates the key and reads the
// subscriptions against the key's site, then hands the gateway holding the
// stream the key's signed principal (which it verifies, as every service
// does) to apply them there, under the same rules (origin, the binding to
// one key, the caps) as a POST it took itself.

// forwardSubject is where the gateway whose client ids start with prefix
// takes the subscriptions other gateways forward.
func forwardSubject(prefix string) string { return "atrium.realtime.subscribe." + prefix }

// forwardRequest is a POST forwarded to the stream's gateway.
type forwardRequest struct {
	ClientID string `json:"client_id"`
	// Principal is the key's principal as the gateway signs it for the
	// services.
	Principal     string   `json:"principal"`
	Origin        string   `json:"origin,omitempty"`
	Subscriptions []string `json:"subscriptions"`
}

// forwardReply is the stream's gateway's answer: no code for success.
type forwardReply struct {
	// Code is a gRPC code; Capped says the refusal is a cap's (429).
	Code    codes.Code `json:"code,omitempty"`
	Capped  bool       `json:"capped,omitempty"`
	Message string     `json:"message,omitempty"`
}

// listenForForwards answers the subscriptions other gateways forward to
// this one's streams.
func (h *realtimeHub) listenForForwards(nc *nats.Conn) error {
	_, err := nc.Subscribe(forwardSubject(h.prefix), func(m *nats.Msg) {
		reply := h.forwarded(m.Data)
		b, _ := json.Marshal(reply)
		if err := m.Respond(b); err != nil {
			h.g.cfg.Logger.Warn("realtime: answering a forwarded subscription", "error", err)
		}
	})
	return err
}

// forwarded applies one forwarded request.
func (h *realtimeHub) forwarded(data []byte) forwardReply {
	var req forwardRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return forwardReply{Code: codes.InvalidArgument, Message: "a forwarded realtime subscription that is not JSON: " + err.Error()}
	}
	p, err := h.g.signer.Verify(req.Principal)
	if err != nil || p.Kind != principal.KindKey {
		return forwardReply{Code: codes.Unauthenticated, Message: "the forwarded realtime subscription carries no valid key principal"}
	}
	h.mu.Lock()
	c := h.clients[req.ClientID]
	h.mu.Unlock()
	if c == nil {
		return forwardReply{Code: codes.NotFound, Message: noStream(req.ClientID).Error()}
	}
	err = h.apply(context.Background(), c, p, req.Origin, req.Subscriptions, false)
	var capped errRealtimeCap
	switch {
	case errors.As(err, &capped):
		return forwardReply{Capped: true, Message: capped.msg}
	case err != nil:
		st := apperr.ToStatus(err)
		return forwardReply{Code: st.Code(), Message: st.Message()}
	}
	return forwardReply{}
}

// forward hands a POST for another gateway's stream to that gateway, after
// reading its subscriptions against the key's site here.
func (h *realtimeHub) forward(ctx context.Context, clientID string, p principal.Principal, origin string, subs []string) error {
	prefix, _, ok := strings.Cut(clientID, "_")
	if !ok || prefix == h.prefix || h.g.nats == nil {
		return noStream(clientID)
	}
	subs, err := h.g.checkSubscriptions(ctx, p, subs)
	if err != nil {
		return err
	}
	if subs == nil {
		subs = []string{}
	}
	b, err := json.Marshal(forwardRequest{ClientID: clientID, Principal: h.g.signer.Token(p), Origin: origin, Subscriptions: subs})
	if err != nil {
		return err
	}
	msg, err := h.g.nats.RequestWithContext(ctx, forwardSubject(prefix), b)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		// No gateway has that prefix (any more): the stream is gone.
		return noStream(clientID)
	case err != nil:
		return status.Errorf(codes.Unavailable, "the gateway holding realtime stream %q did not answer: %v; retry", clientID, err)
	}
	var reply forwardReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		return status.Errorf(codes.Unavailable, "the gateway holding realtime stream %q answered what is not JSON; retry", clientID)
	}
	switch {
	case reply.Capped:
		return errRealtimeCap{reply.Message}
	case reply.Code != codes.OK:
		return status.Error(reply.Code, reply.Message)
	}
	return nil
}

// noStream is the answer for a client id no gateway holds.
func noStream(clientID string) error {
	return status.Error(codes.NotFound, fmt.Sprintf("no open realtime stream has client_id %q: it ended; open a stream with GET %s and use the client_id of its connect event", clientID, realtimePath))
}
