package atrium

import (
	"context"
	"io"
	"iter"
	"net/url"
	"time"
)

// Asset is a file of the site: an image, a PDF, a video.
type Asset struct {
	ID          string    `json:"id"`
	Filename    string    `json:"filename"`
	ContentType string    `json:"content_type"`
	Size        int64     `json:"size"`
	Width       *int      `json:"width"`
	Height      *int      `json:"height"`
	Alt         string    `json:"alt"`
	SHA256      string    `json:"sha256"`
	URL         string    `json:"url"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// AssetUpload describes a file to upload.
type AssetUpload struct {
	// Filename is required; ContentType is what the file is (Atrium checks
	// it against the content; empty lets the content decide).
	Filename, ContentType string
	Alt                   string
}

// AssetsService uploads and manages the site's files.
type AssetsService struct{ t *transport }

// Upload sends a file. The body streams; from an io.ReadSeeker (a file) a
// failed attempt that cannot have stored anything is sent again, from a
// plain io.Reader it is not.
func (s *AssetsService) Upload(ctx context.Context, r io.Reader, u AssetUpload) (*Asset, error) {
	q := url.Values{"filename": {u.Filename}}
	if u.Alt != "" {
		q.Set("alt", u.Alt)
	}
	ct := u.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	req := request{method: "POST", path: "/api/public/v1/assets", query: q, contentType: ct}
	t := s.t
	if rs, ok := r.(io.ReadSeeker); ok {
		req.raw = rs
	} else {
		req.raw = &onceReader{r: r}
		single := *s.t
		single.maxAttempts = 1
		t = &single
	}
	var out struct {
		Asset Asset `json:"asset"`
	}
	if _, err := t.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out.Asset, nil
}

// onceReader is a reader that may be "rewound" only before it is read.
type onceReader struct {
	r    io.Reader
	read bool
}

func (o *onceReader) Read(p []byte) (int, error) { o.read = true; return o.r.Read(p) }

func (o *onceReader) Seek(offset int64, whence int) (int64, error) {
	if o.read || offset != 0 || whence != io.SeekStart {
		return 0, io.ErrNoProgress
	}
	return 0, nil
}

// List returns a page of the site's assets, newest first.
func (s *AssetsService) List(ctx context.Context, p *Page) ([]Asset, error) {
	var out struct {
		Assets []Asset `json:"assets"`
	}
	_, err := s.t.do(ctx, request{method: "GET", path: "/api/public/v1/assets", query: p.query(), idempotent: true}, &out)
	return out.Assets, err
}

// All walks every asset of the site, newest first.
func (s *AssetsService) All(ctx context.Context) iter.Seq2[Asset, error] {
	return offsetPages(ctx, 1000, func(ctx context.Context, limit, offset int) ([]Asset, error) {
		return s.List(ctx, &Page{Limit: limit, Offset: offset})
	})
}

// Get returns one asset.
func (s *AssetsService) Get(ctx context.Context, id string) (*Asset, error) {
	var out struct {
		Asset Asset `json:"asset"`
	}
	if _, err := s.t.do(ctx, request{method: "GET", path: "/api/public/v1/assets" + path(id), idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out.Asset, nil
}

// AssetPatch changes an asset's alt text or file name (nil: unchanged).
type AssetPatch struct {
	Alt      *string `json:"alt,omitempty"`
	Filename *string `json:"filename,omitempty"`
}

// Update changes an asset's alt text or file name; setting either twice
// is harmless, so it is retried like a read.
func (s *AssetsService) Update(ctx context.Context, id string, p AssetPatch) (*Asset, error) {
	var out struct {
		Asset Asset `json:"asset"`
	}
	if _, err := s.t.do(ctx, request{method: "PATCH", path: "/api/public/v1/assets" + path(id), body: p, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out.Asset, nil
}

// Delete deletes an asset (its URL stops serving the file).
func (s *AssetsService) Delete(ctx context.Context, id string) error {
	_, err := s.t.do(ctx, request{method: "DELETE", path: "/api/public/v1/assets" + path(id), idempotent: true}, nil)
	return goneOnRetry(err)
}
