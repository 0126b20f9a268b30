package mediastore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/objstore"
	"github.com/atrium-hq/atrium/platform/publicfile"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// Store keeps generated files on an object store.
type Store struct {
	objects objstore.Store
}

var _ provider.BlobStore = (*Store)(nil)

// New returns a store on objects.
func New(objects objstore.Store) *Store { return &Store{objects: objects} }

// key is name's object key: only names publicfile makes are files the
// gateway serves, so only those are kept.
func key(name string) (string, error) {
	k, ok := publicfile.MediaKey(name)
	if !ok {
		return "", apperr.Invalid("media name %q is not a generated file's name (32 hexadecimal digits and an extension)", name)
	}
	return k, nil
}

// Put implements provider.BlobStore. The content type must be the one the
// name's extension gives: it is what the file is served as.
func (s *Store) Put(ctx context.Context, name, contentType string, data []byte) error {
	k, err := key(name)
	if err != nil {
		return err
	}
	if want, _ := publicfile.ContentType(name); contentType != want {
		return apperr.Invalid("media %q is served as %s, not %s", name, want, contentType)
	}
	if err := s.objects.Put(ctx, k, bytes.NewReader(data), int64(len(data)), contentType); err != nil {
		return fmt.Errorf("mediastore: put %s: %w", name, err)
	}
	return nil
}

// Get implements provider.BlobStore: the whole file (a generated image is
// small).
func (s *Store) Get(ctx context.Context, name string) (provider.Blob, error) {
	k, err := key(name)
	if err != nil {
		return provider.Blob{}, err
	}
	data, err := objstore.ReadAll(ctx, s.objects, k)
	if errors.Is(err, objstore.ErrNotFound) {
		return provider.Blob{}, fmt.Errorf("media %q: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return provider.Blob{}, fmt.Errorf("mediastore: get %s: %w", name, err)
	}
	ct, _ := publicfile.ContentType(name)
	return provider.Blob{ContentType: ct, Data: data}, nil
}

// legacyMagic starts every file of the old directory format.
const legacyMagic = "atrium-blob/1 "

// MigrateBlobDir moves every generated image kept in dir in the old format
// (dir/<name>, a header line, then the bytes) into s, removing each file
// once it is stored, and returns how many it moved. Other files are left
// alone. It is safe to run on every start: a directory with nothing left
// to move costs one listing.
func MigrateBlobDir(ctx context.Context, dir string, s *Store) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	moved := 0
	for _, e := range entries {
		name := e.Name()
		if _, ok := publicfile.MediaKey(name); !ok || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, name)
		raw, err := os.ReadFile(path) //nolint:gosec // G304: a file of the data directory named as a generated image
		if err != nil {
			return moved, err
		}
		header, data, ok := bytes.Cut(raw, []byte("\n"))
		if !ok || !bytes.HasPrefix(header, []byte(legacyMagic)) {
			continue
		}
		ct, _ := publicfile.ContentType(name)
		if err := s.Put(ctx, name, ct, data); err != nil {
			return moved, err
		}
		if err := os.Remove(path); err != nil {
			return moved, err
		}
		moved++
	}
	return moved, nil
}
