package atrium

import (
	"context"
	"iter"
)

// offsetPages walks a list paged by limit and offset, size at a time,
// until a page comes back short.
func offsetPages[T any](ctx context.Context, size int, fetch func(ctx context.Context, limit, offset int) ([]T, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for offset := 0; ; {
			page, err := fetch(ctx, size, offset)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, v := range page {
				if !yield(v, nil) {
					return
				}
			}
			if len(page) < size {
				return
			}
			offset += len(page)
		}
	}
}

// cursorPages walks a list paged by cursor: each page gives the next
// page's cursor, "" after the last.
func cursorPages[T any](ctx context.Context, fetch func(ctx context.Context, cursor string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		cursor := ""
		for {
			page, next, err := fetch(ctx, cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, v := range page {
				if !yield(v, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			cursor = next
		}
	}
}
