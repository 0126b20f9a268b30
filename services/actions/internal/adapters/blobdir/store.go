// Package blobdir keeps the files actions generate, such as featured
// images, in a local directory, for the service to serve back.
//
// Each blob is one file named as the blob, holding a one-line header with
// its content type and then its bytes:
//
//	atrium-blob/1 image/png\n<data>
//
// Keeping the type in the same file as the data, rather than beside it,
// means the single rename that publishes a blob publishes both: a reader
// never sees new data with an old type, and no second file can be left
// behind or go missing. Puts write a temporary file in the same directory,
// fsync it, rename it over the blob and fsync the directory, so a Get sees
// either the old blob or the new one, whole, and a Put that returned
// survives a crash. Temporary files start with a dot, which no blob name
// may, so they can never be read as blobs.
package blobdir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

const (
	// MaxNameLength is the longest blob name, well under the 255 bytes a
	// file name may have with the temporary files' prefix and suffix.
	MaxNameLength = 200
	// DefaultContentType is the type of a blob put without one.
	DefaultContentType = "application/octet-stream"
	// maxContentTypeLength bounds the header.
	maxContentTypeLength = 255

	magic = "atrium-blob/1 "
	// tempPrefix starts the name of a blob being written.
	tempPrefix = ".put-"
	// staleTemp is the age past which a temporary file is the leftover of
	// a Put that crashed rather than one still running.
	staleTemp = time.Hour
)

// Store keeps blobs in a directory. It is safe for concurrent use, also by
// several processes sharing the directory.
type Store struct {
	dir string
}

var _ provider.BlobStore = (*Store)(nil)

// New returns a Store keeping its blobs in dir, creating dir (mode 0750)
// if it does not exist and removing temporary files that crashed Puts left
// there.
func New(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("blobdir: the directory is empty")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("blobdir: create the directory: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("blobdir: read the directory: %w", err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tempPrefix) || !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
			// A file another process removed meanwhile is not a failure.
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("blobdir: remove a leftover temporary file: %w", err)
			}
		}
	}
	return &Store{dir: dir}, nil
}

// Put stores data under name with its content type, replacing any blob of
// that name. An empty content type is DefaultContentType. An invalid name
// or content type is an apperr.Invalid error and writes nothing.
func (s *Store) Put(ctx context.Context, name, contentType string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkName(name); err != nil {
		return err
	}
	if contentType == "" {
		contentType = DefaultContentType
	}
	if err := checkContentType(contentType); err != nil {
		return err
	}
	if err := s.write(name, contentType, data); err != nil {
		return fmt.Errorf("blobdir: put %q: %w", name, err)
	}
	return nil
}

func (s *Store) write(name, contentType string, data []byte) (err error) {
	f, err := os.CreateTemp(s.dir, tempPrefix+name+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if _, err := f.WriteString(magic + contentType + "\n"); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(0o640); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, name)); err != nil {
		return err
	}
	// The rename is durable once the directory is.
	d, err := os.Open(s.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Get returns the blob stored under name; an error wrapping store.ErrNotFound
// if there is none, an apperr.Invalid error for an invalid name.
func (s *Store) Get(ctx context.Context, name string) (provider.Blob, error) {
	if err := ctx.Err(); err != nil {
		return provider.Blob{}, err
	}
	if err := checkName(name); err != nil {
		return provider.Blob{}, err
	}
	raw, err := os.ReadFile(filepath.Join(s.dir, name)) //nolint:gosec // G304: checkName allows no path separator and no leading dot
	if errors.Is(err, fs.ErrNotExist) {
		return provider.Blob{}, fmt.Errorf("blob %q: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return provider.Blob{}, fmt.Errorf("blobdir: get %q: %w", name, err)
	}
	header, data, ok := bytes.Cut(raw, []byte("\n"))
	if !ok || !bytes.HasPrefix(header, []byte(magic)) {
		return provider.Blob{}, fmt.Errorf("blobdir: get %q: the file is not a blob (no %q header)", name, strings.TrimSpace(magic))
	}
	return provider.Blob{ContentType: string(header[len(magic):]), Data: data}, nil
}

// checkName refuses a name that is not a plain file name of its own: only
// letters, digits, '.', '_' and '-', so no separator or parent reference
// can reach outside the directory; not starting with a dot, so no name is
// ".", "..", hidden, or one of the temporary files.
func checkName(name string) error {
	ok := len(name) >= 1 && len(name) <= MaxNameLength && name[0] != '.'
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
	}
	if !ok {
		return apperr.Invalid("blob name %q is invalid: use 1 to %d letters, digits, '.', '_' or '-', not starting with '.'", shorten(name), MaxNameLength)
	}
	return nil
}

// checkContentType accepts a media type such as "image/png" or
// "text/plain; charset=utf-8" that fits on the header's line.
func checkContentType(ct string) error {
	bad := len(ct) > maxContentTypeLength || strings.ContainsFunc(ct, func(r rune) bool { return r < 0x20 || r >= 0x7f })
	if !bad {
		_, _, err := mime.ParseMediaType(ct)
		bad = err != nil
	}
	if bad {
		return apperr.Invalid("content type %q is invalid: want a media type such as image/png, at most %d printable ASCII characters", shorten(ct), maxContentTypeLength)
	}
	return nil
}

// shorten keeps an error message short whatever the caller sent.
func shorten(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
