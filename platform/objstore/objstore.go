package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Store keeps objects. Objects are written whole: a reader sees an object
// as one Put left it, never part of one, and never sees a Put that failed.
type Store interface {
	// Put stores the bytes r yields under key, replacing any object of
	// that name. size is how many bytes r yields, or -1 when that is not
	// known; a known size that r does not yield exactly is ErrSizeMismatch.
	// contentType is kept where the store can keep it (the S3 object's
	// Content-Type, for whoever reads the bucket directly); Atrium itself
	// derives types from keys. Put reads r only as it writes, so the
	// object never has to fit in memory. When r fails, nothing is stored
	// and the error wraps r's.
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	// Open returns the object under key, positioned at its start; an error
	// wrapping ErrNotFound when there is none. The object reads from ctx's
	// lifetime: cancelling ctx ends its reads.
	Open(ctx context.Context, key string) (Object, error)
	// Delete removes the object under key. Deleting an object that does
	// not exist is not an error.
	Delete(ctx context.Context, key string) error
}

// Object is an open object: read from its start or from where Seek puts
// it, then closed.
type Object interface {
	io.ReadSeekCloser
	// Size is the object's length in bytes.
	Size() int64
	// ModTime is when the object was written.
	ModTime() time.Time
}

var (
	// ErrNotFound: no object has the key.
	ErrNotFound = errors.New("objstore: no such object")
	// ErrInvalidKey: the key breaks the key rules (CheckKey).
	ErrInvalidKey = errors.New("objstore: invalid key")
	// ErrSizeMismatch: a Put's reader did not yield the size it was given.
	ErrSizeMismatch = errors.New("objstore: the reader did not yield the size given")
)

// MaxKeyLength is the longest key, in bytes: well under S3's 1,024 and a
// file system's 4,096-byte paths, with room for a prefix; MaxSegmentLength
// the longest segment, a file name's limit.
const (
	MaxKeyLength     = 512
	MaxSegmentLength = 255
)

// CheckKey returns an error wrapping ErrInvalidKey unless key is one or
// more segments separated by '/', each of at most MaxSegmentLength ASCII
// letters, digits, '.', '_' and '-', not starting with '.'. So a key can
// never climb out of a directory ("..", an absolute path), name a hidden
// or temporary file, or mean different things to the two adapters (S3
// keys and file paths agree on every key this allows). One rule the
// adapters cannot check alone: a key must not also be the leading
// segments of another (a directory cannot be a file too), which the keys
// Atrium makes never are.
func CheckKey(key string) error {
	ok := len(key) >= 1 && len(key) <= MaxKeyLength
	for seg := range strings.SplitSeq(key, "/") {
		ok = ok && len(seg) >= 1 && len(seg) <= MaxSegmentLength && seg[0] != '.'
		for i := 0; ok && i < len(seg); i++ {
			c := seg[i]
			ok = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
		}
	}
	if !ok {
		return fmt.Errorf("%w %q: want segments of letters, digits, '.', '_' and '-' separated by '/', none empty, starting with '.' or longer than %d bytes, at most %d bytes in all",
			ErrInvalidKey, shorten(key), MaxSegmentLength, MaxKeyLength)
	}
	return nil
}

func shorten(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// ReadAll reads the whole object under key: for small objects only (a
// generated image), never for what a client uploads.
func ReadAll(ctx context.Context, s Store, key string) ([]byte, error) {
	o, err := s.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	buf := make([]byte, 0, o.Size())
	for {
		n, err := o.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			// The object is longer than it said: read the rest.
			rest, err := io.ReadAll(o)
			return append(buf, rest...), err
		}
	}
}
