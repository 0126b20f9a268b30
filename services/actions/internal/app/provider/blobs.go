package provider

import "context"

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
