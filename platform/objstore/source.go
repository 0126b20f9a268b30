package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Source is what an adapter reads a Put from: the caller's reader, counted
// against the size it was given, stopped by the Put's context, with the
// reader's own failure kept so that the Put can return it whatever the
// layers between (an HTTP client, a file copy) made of it.
type Source struct {
	ctx  context.Context
	r    io.Reader
	size int64
	n    int64
	err  error // the reader's first failure, or a mismatch with size
}

// NewSource wraps a Put's reader; size is as Put was given it (-1:
// unknown).
func NewSource(ctx context.Context, r io.Reader, size int64) *Source {
	return &Source{ctx: ctx, r: r, size: size}
}

// Read implements io.Reader. With a known size it never yields more than
// that size, and fails with ErrSizeMismatch when the reader ends before
// it or has more after it: the read that completes the size looks one
// byte further first, so that the adapter sees the failure before it has
// handed over the whole object and commits nothing.
func (s *Source) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if err := s.ctx.Err(); err != nil {
		s.err = err
		return 0, err
	}
	if s.size >= 0 {
		if s.n == s.size {
			return 0, io.EOF
		}
		if rest := s.size - s.n; int64(len(p)) > rest {
			p = p[:rest]
		}
	}
	n, err := s.r.Read(p)
	s.n += int64(n)
	switch {
	case err != nil && !errors.Is(err, io.EOF):
		s.err = err
		return n, err
	case s.size < 0:
		return n, err
	case s.n < s.size && err != nil: // io.EOF before the size
		s.err = fmt.Errorf("%w: %d bytes given, %d expected", ErrSizeMismatch, s.n, s.size)
		return n, s.err
	case s.n == s.size && err == nil:
		var one [1]byte
		m, perr := io.ReadFull(s.r, one[:])
		if m > 0 {
			s.err = fmt.Errorf("%w: more than the %d bytes expected", ErrSizeMismatch, s.size)
			return 0, s.err
		}
		if perr != nil && !errors.Is(perr, io.EOF) {
			s.err = perr
			return 0, perr
		}
		if err := s.ctx.Err(); err != nil {
			s.err = err
			return 0, err
		}
	}
	return n, err
}

// Len is how many bytes have been read.
func (s *Source) Len() int64 { return s.n }

// Err is the reader's failure (or a size mismatch), if it failed.
func (s *Source) Err() error { return s.err }

// Finish returns the first failure of a Put: the reader's (or a size
// mismatch, or the context's), which the adapter's own error may only
// reflect, else adapterErr.
func (s *Source) Finish(adapterErr error) error {
	if s.err != nil {
		return s.err
	}
	if adapterErr == nil && s.size >= 0 && s.n != s.size {
		return fmt.Errorf("%w: %d bytes read, %d expected", ErrSizeMismatch, s.n, s.size)
	}
	return adapterErr
}
