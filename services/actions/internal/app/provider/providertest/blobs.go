package providertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// blobName is a name as generate_blog_image gives its images.
func blobName(t *testing.T) string {
	name, err := provider.NewPNGName()
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// RunBlobs runs the blob store's contract against stores made by newStore:
// a blob comes back as it was put, byte for byte with its content type
// (GET /media serves it so); a name never put is store.ErrNotFound (a 404);
// concurrent puts of different names each keep their own blob; and a put
// whose context has ended stores nothing.
func RunBlobs(t *testing.T, newStore func(t *testing.T) provider.BlobStore) {
	t.Run("ABlobComesBackAsPut", func(t *testing.T) {
		s := newStore(t)
		name, data := blobName(t), append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0, 1, 2, 255}, 64<<10)...)
		if err := s.Put(t.Context(), name, "image/png", data); err != nil {
			t.Fatalf("Put: %v", err)
		}
		b, err := s.Get(t.Context(), name)
		if err != nil || b.ContentType != "image/png" || !bytes.Equal(b.Data, data) {
			t.Fatalf("Get = %q, %d bytes (equal: %v), %v; want image/png and the %d bytes put", b.ContentType, len(b.Data), bytes.Equal(b.Data, data), err, len(data))
		}
	})
	t.Run("ANameNeverPutIsNotFound", func(t *testing.T) {
		if _, err := newStore(t).Get(t.Context(), blobName(t)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get of a name never put: %v, want store.ErrNotFound", err)
		}
	})
	t.Run("ConcurrentPutsKeepTheirOwnBlobs", func(t *testing.T) {
		s := newStore(t)
		names := make([]string, 8)
		for i := range names {
			names[i] = blobName(t)
		}
		var wg sync.WaitGroup
		for i, name := range names {
			wg.Go(func() {
				if err := s.Put(context.Background(), name, "image/png", []byte(fmt.Sprint("blob ", i))); err != nil {
					t.Errorf("Put %s: %v", name, err)
				}
			})
		}
		wg.Wait()
		for i, name := range names {
			if b, err := s.Get(t.Context(), name); err != nil || string(b.Data) != fmt.Sprint("blob ", i) {
				t.Errorf("Get %s = %q, %v; want %q", name, b.Data, err, fmt.Sprint("blob ", i))
			}
		}
	})
	t.Run("APutWhoseContextEndedStoresNothing", func(t *testing.T) {
		s := newStore(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		name := blobName(t)
		if err := s.Put(ctx, name, "image/png", []byte("late")); !errors.Is(err, context.Canceled) {
			t.Errorf("Put with a canceled context: %v, want context.Canceled", err)
		}
		if _, err := s.Get(t.Context(), name); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get after a canceled Put: %v, want store.ErrNotFound", err)
		}
	})
}
