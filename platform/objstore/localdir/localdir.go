package localdir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/atrium-hq/atrium/platform/objstore"
)

const (
	tmpDir = ".tmp"
	// staleTemp is the age past which a temporary file is a crashed Put's
	// leftover rather than a Put still running (in another process,
	// perhaps).
	staleTemp = time.Hour
	// copyBuffer is the size of the buffer a Put copies through: large
	// enough that a 25 MiB upload is a hundred writes, not eight hundred.
	copyBuffer = 256 << 10
)

// Store keeps objects in a directory. It is safe for concurrent use, also
// by several processes sharing the directory.
type Store struct {
	root string
}

var _ objstore.Store = (*Store)(nil)

// New returns a Store keeping its objects under dir, creating dir (mode
// 0750) if needed and removing temporary files that crashed Puts left.
func New(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("localdir: the directory is empty")
	}
	if err := os.MkdirAll(filepath.Join(dir, tmpDir), 0o750); err != nil {
		return nil, fmt.Errorf("localdir: create %s: %w", dir, err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, tmpDir))
	if err != nil {
		return nil, fmt.Errorf("localdir: read %s: %w", dir, err)
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
			if err := os.Remove(filepath.Join(dir, tmpDir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("localdir: remove a crashed write's leftover: %w", err)
			}
		}
	}
	return &Store{root: dir}, nil
}

// Dir is the directory the objects are in.
func (s *Store) Dir() string { return s.root }

func (s *Store) path(key string) string { return filepath.Join(s.root, filepath.FromSlash(key)) }

var buffers = sync.Pool{New: func() any { return new([copyBuffer]byte) }}

// Put implements objstore.Store.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64, _ string) (err error) {
	if err := objstore.CheckKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Join(s.root, tmpDir), "put-*")
	if err != nil {
		return fmt.Errorf("localdir: put %s: %w", key, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	src := objstore.NewSource(ctx, r, size)
	buf := buffers.Get().(*[copyBuffer]byte)
	// The file is written through a plain io.Writer: *os.File's ReadFrom
	// would look for a zero-copy path the source never offers.
	_, cerr := io.CopyBuffer(struct{ io.Writer }{f}, src, buf[:])
	buffers.Put(buf)
	if err := src.Finish(cerr); err != nil {
		return err
	}
	if err := f.Chmod(0o640); err != nil {
		return fmt.Errorf("localdir: put %s: %w", key, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("localdir: put %s: %w", key, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("localdir: put %s: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dst := s.path(key)
	created, err := s.mkdirs(filepath.Dir(dst))
	if err != nil {
		return fmt.Errorf("localdir: put %s: %w", key, err)
	}
	if err := os.Rename(f.Name(), dst); err != nil {
		return fmt.Errorf("localdir: put %s: %w", key, err)
	}
	// The rename is durable once its directory is, and a directory made
	// for it once its parent is.
	for _, d := range append([]string{filepath.Dir(dst)}, created...) {
		if err := syncDir(d); err != nil {
			return fmt.Errorf("localdir: put %s: %w", key, err)
		}
	}
	return nil
}

// mkdirs makes dir and its missing parents under the root, and returns the
// parents of those it made, whose entries must reach the disk too.
func (s *Store) mkdirs(dir string) ([]string, error) {
	var made []string
	for d := dir; d != s.root && strings.HasPrefix(d, s.root); d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		made = append(made, filepath.Dir(d))
	}
	if len(made) == 0 {
		return nil, nil
	}
	return made, os.MkdirAll(dir, 0o750)
}

func syncDir(dir string) error {
	d, err := os.Open(dir) //nolint:gosec // G304: a directory under the store's root, from a checked key
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Open implements objstore.Store. The object is the file itself, so that
// a copy of it to a network connection goes through sendfile(2).
func (s *Store) Open(ctx context.Context, key string) (objstore.Object, error) {
	if err := objstore.CheckKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(s.path(key)) //nolint:gosec // G304: CheckKey admits no parent reference or absolute path
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, fmt.Errorf("%w: %s", objstore.ErrNotFound, key)
	}
	if err != nil {
		return nil, fmt.Errorf("localdir: open %s: %w", key, err)
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("localdir: open %s: %w", key, err)
	}
	if !info.Mode().IsRegular() {
		_ = f.Close()
		return nil, fmt.Errorf("%w: %s", objstore.ErrNotFound, key)
	}
	return &Object{File: f, size: info.Size(), mod: info.ModTime()}, nil
}

// Object is an open object: the *os.File, whose SyscallConn lets
// net/http's copy to a connection use sendfile(2).
type Object struct {
	*os.File
	size int64
	mod  time.Time
}

// Size implements objstore.Object.
func (o *Object) Size() int64 { return o.size }

// ModTime implements objstore.Object.
func (o *Object) ModTime() time.Time { return o.mod }

// Delete implements objstore.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := objstore.CheckKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p := s.path(key)
	if info, err := os.Lstat(p); err == nil && !info.Mode().IsRegular() {
		return nil // a directory of keys is no object
	}
	err := os.Remove(p)
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	return fmt.Errorf("localdir: delete %s: %w", key, err)
}
