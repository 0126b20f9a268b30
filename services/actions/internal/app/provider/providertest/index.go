package providertest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// RunIndexer runs the indexer's contract against indexers made by
// newIndexer, which must submit to the endpoint URL it is given (a server
// of the suite's on the loopback interface): a submission the endpoint
// accepts is answered with the endpoint and its status (index_url records
// both), one it refuses is a provider failure with the endpoint's status,
// an endpoint that cannot be reached is a provider failure (503), and the
// caller's context ends a submission.
func RunIndexer(t *testing.T, newIndexer func(t *testing.T, endpoint string) provider.Indexer) {
	const page = "https://www.client.example/menu"
	endpoint := func(t *testing.T, status int) (string, func() []string) {
		var mu sync.Mutex
		var bodies []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies = append(bodies, r.URL.RawQuery+" "+string(b))
			mu.Unlock()
			if status == 0 {
				<-r.Context().Done()
				return
			}
			w.WriteHeader(status)
		}))
		t.Cleanup(srv.Close)
		return srv.URL, func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), bodies...)
		}
	}

	for _, status := range []int{http.StatusOK, http.StatusAccepted} {
		t.Run("AcceptedWith"+strconv.Itoa(status), func(t *testing.T) {
			url, received := endpoint(t, status)
			sub, err := newIndexer(t, url).Submit(t.Context(), []string{page})
			if err != nil {
				t.Fatalf("Submit: %v", err)
			}
			if sub.Endpoint != url || sub.StatusCode != status {
				t.Errorf("submission %+v, want endpoint %s and status %d", sub, url, status)
			}
			if got := received(); len(got) != 1 || !strings.Contains(got[0], page) {
				t.Errorf("the endpoint received %q, want one submission of %s", got, page)
			}
		})
	}
	t.Run("ARefusalIsAFailureWithTheEndpointsStatus", func(t *testing.T) {
		url, _ := endpoint(t, http.StatusTooManyRequests)
		_, err := newIndexer(t, url).Submit(t.Context(), []string{page})
		wantFailure(t, err, http.StatusTooManyRequests)
	})
	t.Run("AnUnreachableEndpointIsAFailure", func(t *testing.T) {
		_, err := newIndexer(t, "http://"+closedAddr(t)+"/indexnow").Submit(t.Context(), []string{page})
		wantFailure(t, err, http.StatusServiceUnavailable)
	})
	t.Run("TheCallersContextEndsTheSubmission", func(t *testing.T) {
		url, _ := endpoint(t, 0)
		ix := newIndexer(t, url)
		callerContexts(t, func(ctx context.Context) error {
			_, err := ix.Submit(ctx, []string{page})
			return err
		})
	})
}
