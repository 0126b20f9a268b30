package blobdir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

func newStore(t *testing.T) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "blobs")
	s, err := New(dir)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s, dir
}

// files lists the directory's entries.
func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestNewCreatesTheDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if _, err := New(dir); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(dir)
	if err != nil || !info.IsDir() {
		t.Fatalf("the directory was not created: %v", err)
	}
	if perm := info.Mode().Perm(); perm&0o027 != 0 {
		t.Errorf("the directory's mode is %v, want no more than 0750", perm)
	}
}

func TestNewRefusesBadDirectories(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"", file} {
		if _, err := New(dir); err == nil {
			t.Errorf("New(%q) accepted a directory it cannot use", dir)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, dir := newStore(t)
	png := []byte("\x89PNG\r\n\x1a\n\nbytes with\nnewlines\x00")
	if err := s.Put(ctx, "post-1.png", "image/png", png); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "notes.txt", "text/plain; charset=utf-8", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "empty", "", nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		name string
		blob provider.Blob
	}{
		{"post-1.png", provider.Blob{ContentType: "image/png", Data: png}},
		{"notes.txt", provider.Blob{ContentType: "text/plain; charset=utf-8", Data: []byte("hello")}},
		{"empty", provider.Blob{ContentType: DefaultContentType, Data: nil}},
	} {
		got, err := s.Get(ctx, want.name)
		if err != nil {
			t.Fatalf("Get(%q): %v", want.name, err)
		}
		if got.ContentType != want.blob.ContentType || !bytes.Equal(got.Data, want.blob.Data) {
			t.Errorf("Get(%q) = %q %q, want %q %q", want.name, got.ContentType, got.Data, want.blob.ContentType, want.blob.Data)
		}
	}

	// A new Store on the same directory, as after a restart, holds them.
	again, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := again.Get(ctx, "post-1.png"); err != nil || !bytes.Equal(got.Data, png) {
		t.Errorf("after reopening: %q, %v", got.Data, err)
	}
	if got := files(t, dir); len(got) != 3 {
		t.Errorf("the directory holds %q, want only the three blobs", got)
	}
}

func TestInvalidNames(t *testing.T) {
	ctx := context.Background()
	s, dir := newStore(t)
	for _, name := range []string{
		"", "../x", "..", ".", "a/b", "/etc/passwd", `a\b`, ".hidden", "a b", "x\x00", "é.png", "a:b",
		strings.Repeat("a", MaxNameLength+1),
	} {
		err := s.Put(ctx, name, "image/png", []byte("data"))
		if apperr.KindOf(err) != apperr.KindInvalid {
			t.Errorf("Put(%q): error %v, want an invalid-name error", name, err)
		}
		if _, err := s.Get(ctx, name); apperr.KindOf(err) != apperr.KindInvalid {
			t.Errorf("Get(%q): error %v, want an invalid-name error", name, err)
		}
	}
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("refused Puts wrote %q", got)
	}
	if got := files(t, filepath.Dir(dir)); len(got) != 1 {
		t.Errorf("refused Puts wrote outside the directory: %q", got)
	}
	for _, name := range []string{"a", "A-b_c.1.png", "x..y", strings.Repeat("a", MaxNameLength)} {
		if err := s.Put(ctx, name, "image/png", []byte("data")); err != nil {
			t.Errorf("Put(%q): %v, want the name accepted", name, err)
		}
	}
}

func TestInvalidContentTypes(t *testing.T) {
	s, dir := newStore(t)
	for _, ct := range []string{"not a type", "image/png\nX-Evil: 1", "text/plain; charset=\"é\"", "image/" + strings.Repeat("x", 300)} {
		if err := s.Put(context.Background(), "a.png", ct, []byte("data")); apperr.KindOf(err) != apperr.KindInvalid {
			t.Errorf("Put with content type %q: error %v, want an invalid-request error", ct, err)
		}
	}
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("refused Puts wrote %q", got)
	}
}

func TestOverwrite(t *testing.T) {
	ctx := context.Background()
	s, dir := newStore(t)
	if err := s.Put(ctx, "img", "image/png", []byte("first, longer version")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "img", "image/jpeg", []byte("second")); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "img")
	if err != nil {
		t.Fatal(err)
	}
	if got.ContentType != "image/jpeg" || string(got.Data) != "second" {
		t.Errorf("Get = %q %q, want the second Put's image/jpeg %q", got.ContentType, got.Data, "second")
	}
	if got := files(t, dir); len(got) != 1 {
		t.Errorf("the directory holds %q, want only the blob", got)
	}
}

func TestForeignFileIsNotABlob(t *testing.T) {
	s, dir := newStore(t)
	if err := os.WriteFile(filepath.Join(dir, "copied.png"), []byte("\x89PNG raw"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(context.Background(), "copied.png")
	if err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("error %v, want a failure saying the file is not a blob", err)
	}
}

func TestCanceledContextWritesNothing(t *testing.T) {
	s, dir := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Put(ctx, "a", "image/png", []byte("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Put: error %v, want context.Canceled", err)
	}
	if _, err := s.Get(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Errorf("Get: error %v, want context.Canceled", err)
	}
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("a canceled Put wrote %q", got)
	}
}

func TestNewRemovesStaleTemporaryFiles(t *testing.T) {
	s, dir := newStore(t)
	if err := s.Put(context.Background(), "kept", "text/plain", []byte("x")); err != nil {
		t.Fatal(err)
	}
	stale, fresh := filepath.Join(dir, tempPrefix+"a-1"), filepath.Join(dir, tempPrefix+"b-2")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleTemp)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := New(dir); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(files(t, dir), " ")
	if want := tempPrefix + "b-2 kept"; got != want {
		t.Errorf("the directory holds %q, want %q: the stale temporary file removed, a running Put's kept", got, want)
	}
}

func TestConcurrentWritersOfDifferentNames(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	const writers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				name := fmt.Sprintf("w%d-%d.bin", w, i)
				if err := s.Put(ctx, name, "application/x-test", []byte(name)); err != nil {
					errs <- err
				}
				if _, err := s.Get(ctx, name); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := range writers {
		for i := range each {
			name := fmt.Sprintf("w%d-%d.bin", w, i)
			got, err := s.Get(ctx, name)
			if err != nil || string(got.Data) != name || got.ContentType != "application/x-test" {
				t.Errorf("Get(%q) = %q %q, %v", name, got.ContentType, got.Data, err)
			}
		}
	}
}

// TestReadersNeverSeePartialBlobs reads a blob while it is replaced, again
// and again, by blobs of two sizes and types: every read must be one of
// them, whole, with its own type.
func TestReadersNeverSeePartialBlobs(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	a := bytes.Repeat([]byte{'a'}, 1<<20)
	b := bytes.Repeat([]byte{'b'}, 2<<20)
	if err := s.Put(ctx, "big", "text/a", a); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for i := range 30 {
			data, ct := a, "text/a"
			if i%2 == 0 {
				data, ct = b, "text/b"
			}
			if err := s.Put(ctx, "big", ct, data); err != nil {
				t.Error(err)
				return
			}
		}
	})
	reads := make([]int, 2)
	for r := range reads {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				got, err := s.Get(ctx, "big")
				if err != nil {
					t.Error(err)
					return
				}
				switch {
				case got.ContentType == "text/a" && bytes.Equal(got.Data, a):
				case got.ContentType == "text/b" && bytes.Equal(got.Data, b):
				default:
					t.Errorf("read a blob of %d bytes typed %q: neither whole blob", len(got.Data), got.ContentType)
					return
				}
				reads[r]++
			}
		})
	}
	wg.Wait()
	if reads[0]+reads[1] == 0 {
		t.Error("no read overlapped the writes")
	}
}
