package providertest

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// wantFailure checks that err is a *provider.Error with status code, or
// any error status when code is 0, and returns it.
func wantFailure(t *testing.T, err error, code int) {
	t.Helper()
	var pe *provider.Error
	switch {
	case !errors.As(err, &pe):
		t.Fatalf("error = %v (%T), want a *provider.Error, which the run reports with its status", err, err)
	case code != 0 && pe.StatusCode != code:
		t.Fatalf("status %d (%v), want %d", pe.StatusCode, pe, code)
	case pe.StatusCode < 400 || pe.StatusCode > 599:
		t.Fatalf("status %d (%v), want an HTTP error status", pe.StatusCode, pe)
	case pe.Message == "" || pe.Provider == "":
		t.Fatalf("error %+v does not say which provider failed and how", pe)
	}
}

// callerContexts are the two ways a caller ends a call: it cancels
// (context.Canceled), or its deadline passes (context.DeadlineExceeded,
// which the engine reports as a run that did not finish in time). call
// must return the context's own error, not a provider failure.
func callerContexts(t *testing.T, call func(ctx context.Context) error) {
	t.Helper()
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel := context.WithDeadline(t.Context(), time.Unix(1, 0))
	defer cancel()
	for _, c := range []struct {
		ctx  context.Context
		want error
	}{{canceled, context.Canceled}, {expired, context.DeadlineExceeded}} {
		err := call(c.ctx)
		var pe *provider.Error
		if !errors.Is(err, c.want) || errors.As(err, &pe) {
			t.Errorf("with a %v context: error %v, want %v itself", c.want, err, c.want)
		}
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
