package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"regexp"
)

// BlobStore keeps generated files, such as images, and serves them back.
type BlobStore interface {
	Put(ctx context.Context, name, contentType string, data []byte) error
	// Get returns an error wrapping store.ErrNotFound (platform/store) for
	// a name it does not hold.
	Get(ctx context.Context, name string) (Blob, error)
}

// Blob is a stored file.
type Blob struct {
	ContentType string
	Data        []byte
}

// A generated file's name is 128 random bits in hex and its extension: the
// name is the capability (the media route needs no key), so only those
// given its URL can fetch the file. Nothing else names a generated file.
var pngName = regexp.MustCompile(`^[0-9a-f]{32}\.png$`)

// NewPNGName returns a new name for a generated PNG.
func NewPNGName() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]) + ".png", nil
}

// IsGeneratedName reports whether name is one NewPNGName gives.
func IsGeneratedName(name string) bool { return pngName.MatchString(name) }
