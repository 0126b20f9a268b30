package objstoretest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/objstore"
)

// RunAll runs the contract against fresh, empty stores made by newStore.
func RunAll(t *testing.T, newStore func(t *testing.T) objstore.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, objstore.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"UnknownSizeLargerThanAPart", testLarge},
		{"EmptyObjects", testEmpty},
		{"Overwrite", testOverwrite},
		{"Delete", testDelete},
		{"MissingObjects", testMissing},
		{"SeekAndRanges", testSeek},
		{"InvalidKeys", testInvalidKeys},
		{"FailedReaderStoresNothing", testFailedReader},
		{"SizeMismatchStoresNothing", testSizeMismatch},
		{"CanceledPutStoresNothing", testCanceled},
		{"ReadersNeverSeePartialObjects", testAtomicOverwrite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

func random(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// onlyReader hides every method of r but Read, as a network stream would.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func put(t *testing.T, s objstore.Store, key string, data []byte, known bool) {
	t.Helper()
	size := int64(len(data))
	if !known {
		size = -1
	}
	if err := s.Put(t.Context(), key, onlyReader{bytes.NewReader(data)}, size, "application/octet-stream"); err != nil {
		t.Fatalf("Put(%s, %d bytes, size %d): %v", key, len(data), size, err)
	}
}

// read reads the whole object and checks its size against what it read.
func read(t *testing.T, s objstore.Store, key string) []byte {
	t.Helper()
	o, err := s.Open(t.Context(), key)
	if err != nil {
		t.Fatalf("Open(%s): %v", key, err)
	}
	defer o.Close()
	data, err := io.ReadAll(o)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	if o.Size() != int64(len(data)) {
		t.Fatalf("%s: Size() = %d, but %d bytes were read", key, o.Size(), len(data))
	}
	return data
}

func wantMissing(t *testing.T, s objstore.Store, key string) {
	t.Helper()
	o, err := s.Open(t.Context(), key)
	if err == nil {
		o.Close()
		t.Fatalf("Open(%s) found an object; want none", key)
	}
	if !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("Open(%s): %v; want objstore.ErrNotFound", key, err)
	}
}

func testRoundTrip(t *testing.T, s objstore.Store) {
	before := time.Now().Add(-5 * time.Second)
	small := random(t, 1000)
	put(t, s, "assets/ab/first.png", small, true)
	put(t, s, "assets/cd/second.jpg", []byte("known later"), false)
	put(t, s, "media/third.PNG", []byte{0, '\n', 0xff}, true)
	for key, want := range map[string][]byte{"assets/ab/first.png": small, "assets/cd/second.jpg": []byte("known later"), "media/third.PNG": {0, '\n', 0xff}} {
		if got := read(t, s, key); !bytes.Equal(got, want) {
			t.Errorf("%s: read %d bytes %.20q, want %d bytes %.20q", key, len(got), got, len(want), want)
		}
	}
	o, err := s.Open(t.Context(), "assets/ab/first.png")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if mod := o.ModTime(); mod.Before(before) || mod.After(time.Now().Add(5*time.Second)) {
		t.Errorf("ModTime() = %v; want about now", mod)
	}
	// A key that only prefixes others is no object.
	wantMissing(t, s, "assets")
	wantMissing(t, s, "assets/ab")
}

func testLarge(t *testing.T, s objstore.Store) {
	// Larger than the S3 adapter's part: a multipart upload there.
	data := random(t, 12<<20+123)
	put(t, s, "big/unknown.bin", data, false)
	put(t, s, "big/known.bin", data, true)
	want := sha256.Sum256(data)
	for _, key := range []string{"big/unknown.bin", "big/known.bin"} {
		if got := read(t, s, key); sha256.Sum256(got) != want {
			t.Errorf("%s: read %d bytes that differ from the %d put", key, len(got), len(data))
		}
	}
}

func testEmpty(t *testing.T, s objstore.Store) {
	put(t, s, "empty/known", nil, true)
	put(t, s, "empty/unknown", nil, false)
	for _, key := range []string{"empty/known", "empty/unknown"} {
		if got := read(t, s, key); len(got) != 0 {
			t.Errorf("%s: read %d bytes, want none", key, len(got))
		}
	}
}

func testOverwrite(t *testing.T, s objstore.Store) {
	put(t, s, "o/key", []byte("the first, longer version"), true)
	put(t, s, "o/key", []byte("second"), false)
	if got := read(t, s, "o/key"); string(got) != "second" {
		t.Fatalf("after overwrite: %q, want %q", got, "second")
	}
}

func testDelete(t *testing.T, s objstore.Store) {
	put(t, s, "d/gone", []byte("x"), true)
	put(t, s, "d/kept", []byte("y"), true)
	if err := s.Delete(t.Context(), "d/gone"); err != nil {
		t.Fatal(err)
	}
	wantMissing(t, s, "d/gone")
	if got := read(t, s, "d/kept"); string(got) != "y" {
		t.Fatalf("d/kept = %q after deleting d/gone", got)
	}
	// Again, and keys that never existed: not errors.
	for _, key := range []string{"d/gone", "never/was", "d"} {
		if err := s.Delete(t.Context(), key); err != nil {
			t.Errorf("Delete(%s) of no object: %v; want nil", key, err)
		}
	}
	if got := read(t, s, "d/kept"); string(got) != "y" {
		t.Fatalf("d/kept = %q after deleting its directory's key", got)
	}
}

func testMissing(t *testing.T, s objstore.Store) {
	wantMissing(t, s, "nothing/here.png")
	wantMissing(t, s, "nothing")
}

func testSeek(t *testing.T, s objstore.Store) {
	data := random(t, 300_000)
	put(t, s, "seek/obj", data, true)
	o, err := s.Open(t.Context(), "seek/obj")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	// As http.ServeContent learns the size.
	if end, err := o.Seek(0, io.SeekEnd); err != nil || end != int64(len(data)) {
		t.Fatalf("Seek(0, End) = %d, %v; want %d", end, err, len(data))
	}
	if pos, err := o.Seek(0, io.SeekStart); err != nil || pos != 0 {
		t.Fatalf("Seek(0, Start) = %d, %v", pos, err)
	}
	head := make([]byte, 10)
	if _, err := io.ReadFull(o, head); err != nil || !bytes.Equal(head, data[:10]) {
		t.Fatalf("first 10 bytes: %v, %v", head, err)
	}
	// Ranges anywhere, backwards too, as Range requests and video players ask.
	for _, r := range []struct{ start, n int }{{250_000, 1000}, {17, 5}, {299_990, 10}, {100_000, 150_000}, {0, 1}} {
		if pos, err := o.Seek(int64(r.start), io.SeekStart); err != nil || pos != int64(r.start) {
			t.Fatalf("Seek(%d) = %d, %v", r.start, pos, err)
		}
		got := make([]byte, r.n)
		if _, err := io.ReadFull(o, got); err != nil {
			t.Fatalf("read %d bytes at %d: %v", r.n, r.start, err)
		}
		if !bytes.Equal(got, data[r.start:r.start+r.n]) {
			t.Fatalf("bytes %d to %d differ", r.start, r.start+r.n)
		}
	}
	if pos, err := o.Seek(-10, io.SeekEnd); err != nil || pos != int64(len(data)-10) {
		t.Fatalf("Seek(-10, End) = %d, %v", pos, err)
	}
	rest, err := io.ReadAll(o)
	if err != nil || !bytes.Equal(rest, data[len(data)-10:]) {
		t.Fatalf("the last 10 bytes: %d bytes, %v", len(rest), err)
	}
	if n, err := o.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("Read at the end = %d, %v; want 0, io.EOF", n, err)
	}
}

// InvalidKeys are keys every adapter refuses, with ErrInvalidKey.
var InvalidKeys = []string{"", "/abs", "trailing/", "a//b", "../up", "a/../b", "..", ".", ".hidden", "a/.tmp/x",
	"sp ace", `back\slash`, "é", "nul\x00", "q?uery", "a#b", strings.Repeat("k", objstore.MaxSegmentLength+1),
	strings.Repeat(strings.Repeat("k", 200)+"/", 3)[:objstore.MaxKeyLength+1]}

func testInvalidKeys(t *testing.T, s objstore.Store) {
	for _, key := range InvalidKeys {
		err := s.Put(t.Context(), key, strings.NewReader("x"), 1, "text/plain")
		if !errors.Is(err, objstore.ErrInvalidKey) {
			t.Errorf("Put(%q): %v; want ErrInvalidKey", key, err)
		}
		if o, err := s.Open(t.Context(), key); !errors.Is(err, objstore.ErrInvalidKey) {
			if err == nil {
				o.Close()
			}
			t.Errorf("Open(%q): %v; want ErrInvalidKey", key, err)
		}
		if err := s.Delete(t.Context(), key); !errors.Is(err, objstore.ErrInvalidKey) {
			t.Errorf("Delete(%q): %v; want ErrInvalidKey", key, err)
		}
	}
	seg := strings.Repeat("k", objstore.MaxSegmentLength)
	longest := seg + "/" + seg[:objstore.MaxKeyLength-objstore.MaxSegmentLength-3] + "/k" // 512 bytes
	put(t, s, longest, []byte("longest"), true)
	put(t, s, "A-b_c.1/x..y", []byte("odd but allowed"), true)
}

// failingReader yields n bytes, then fails with err.
type failingReader struct {
	n   int
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	k := min(len(p), f.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	f.n -= k
	return k, nil
}

var errReader = errors.New("the client went away")

func testFailedReader(t *testing.T, s objstore.Store) {
	put(t, s, "f/existing", []byte("kept"), true)
	for _, tc := range []struct {
		name       string
		before     int
		size       int64
		key        string
		wantBefore string
	}{
		{"known size, new key", 100_000, 200_000, "f/new-known", ""},
		{"unknown size, new key", 100_000, -1, "f/new-unknown", ""},
		{"unknown size past a part", 9 << 20, -1, "f/new-multipart", ""},
		{"known size over an object", 10, 20, "f/existing", "kept"},
		{"unknown size over an object", 10, -1, "f/existing", "kept"},
	} {
		err := s.Put(t.Context(), tc.key, &failingReader{n: tc.before, err: errReader}, tc.size, "image/png")
		if !errors.Is(err, errReader) {
			t.Errorf("%s: Put = %v; want the reader's error", tc.name, err)
		}
		if tc.wantBefore == "" {
			wantMissing(t, s, tc.key)
		} else if got := read(t, s, tc.key); string(got) != tc.wantBefore {
			t.Errorf("%s: the object is %q after a failed Put; want it as it was, %q", tc.name, got, tc.wantBefore)
		}
	}
}

func testSizeMismatch(t *testing.T, s objstore.Store) {
	put(t, s, "m/existing", []byte("kept"), true)
	for _, tc := range []struct {
		name string
		data string
		size int64
		key  string
	}{
		{"fewer bytes than said", "short", 10, "m/short"},
		{"more bytes than said", "longer than said", 5, "m/long"},
		{"more bytes than said, over an object", "longer than said", 5, "m/existing"},
	} {
		err := s.Put(t.Context(), tc.key, onlyReader{strings.NewReader(tc.data)}, tc.size, "text/plain")
		if !errors.Is(err, objstore.ErrSizeMismatch) {
			t.Errorf("%s: Put = %v; want ErrSizeMismatch", tc.name, err)
		}
	}
	wantMissing(t, s, "m/short")
	wantMissing(t, s, "m/long")
	if got := read(t, s, "m/existing"); string(got) != "kept" {
		t.Errorf("m/existing is %q after a failed Put; want it as it was", got)
	}
}

// blockingReader yields its bytes, then blocks until ctx ends.
type blockingReader struct {
	data    []byte
	ctx     context.Context
	reached chan struct{}
	once    sync.Once
}

func (b *blockingReader) Read(p []byte) (int, error) {
	if len(b.data) > 0 {
		n := copy(p, b.data)
		b.data = b.data[n:]
		return n, nil
	}
	b.once.Do(func() { close(b.reached) })
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

func testCanceled(t *testing.T, s objstore.Store) {
	for _, size := range []int64{1 << 20, -1} {
		ctx, cancel := context.WithCancel(t.Context())
		r := &blockingReader{data: random(t, 64<<10), ctx: ctx, reached: make(chan struct{})}
		done := make(chan error, 1)
		go func() { done <- s.Put(ctx, "c/canceled", r, size, "video/mp4") }()
		<-r.reached // the Put has read everything the client sent so far
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("size %d: Put = %v; want context.Canceled", size, err)
		}
		wantMissing(t, s, "c/canceled")
	}
}

func testAtomicOverwrite(t *testing.T, s objstore.Store) {
	a, b := bytes.Repeat([]byte{'a'}, 1<<20), bytes.Repeat([]byte{'b'}, 2<<20)
	put(t, s, "atomic/obj", a, true)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for i := range 12 {
			data := a
			if i%2 == 0 {
				data = b
			}
			if err := s.Put(context.Background(), "atomic/obj", bytes.NewReader(data), int64(len(data)), "text/plain"); err != nil {
				t.Error(err)
				return
			}
		}
	})
	var reads [2]int
	for r := range reads {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				o, err := s.Open(context.Background(), "atomic/obj")
				if err != nil {
					t.Error(err)
					return
				}
				got, err := io.ReadAll(o)
				o.Close()
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
					t.Errorf("read %d bytes that are neither whole object", len(got))
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
