package atrium

import (
	"context"
	"net/url"
	"time"
)

// PreviewLink is a link that shows one item, drafts included, without a
// key, until it expires or is revoked.
type PreviewLink struct {
	ID         string `json:"id"`
	Collection string `json:"collection"`
	ItemID     string `json:"item_id"`
	// URL is set only by Create: Atrium keeps only the token's hash.
	URL       string    `json:"url,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// PreviewLinksService makes, lists and revokes preview links (write keys).
type PreviewLinksService struct{ t *transport }

// Create gives out a preview link to an item, living for expiresIn (0:
// Atrium's default, 7 days; at most 30 days, whole seconds). A create is
// not retried unless it cannot have reached the data: a retried create
// would give out a second link.
func (s *PreviewLinksService) Create(ctx context.Context, collection, itemID string, expiresIn time.Duration) (*PreviewLink, error) {
	body := map[string]any{}
	if expiresIn > 0 {
		body["expires_in_seconds"] = int64(expiresIn / time.Second)
	}
	var out struct {
		PreviewLink PreviewLink `json:"preview_link"`
	}
	if _, err := s.t.do(ctx, request{method: "POST", path: "/api/public/v1/collections" + path(collection, itemID, "preview-links"), body: body}, &out); err != nil {
		return nil, err
	}
	return &out.PreviewLink, nil
}

// List returns a collection's live links, newest first; itemID, when not
// empty, keeps those of one item.
func (s *PreviewLinksService) List(ctx context.Context, collection, itemID string) ([]PreviewLink, error) {
	q := url.Values{"collection": {collection}}
	if itemID != "" {
		q.Set("item_id", itemID)
	}
	var out struct {
		PreviewLinks []PreviewLink `json:"preview_links"`
	}
	_, err := s.t.do(ctx, request{method: "GET", path: "/api/public/v1/preview-links", query: q, idempotent: true}, &out)
	return out.PreviewLinks, err
}

// Revoke revokes a link: its URL answers 404 from then on. A revoke
// retried after a lost answer that finds the link gone took effect the
// first time, and is a success.
func (s *PreviewLinksService) Revoke(ctx context.Context, id string) error {
	_, err := s.t.do(ctx, request{method: "DELETE", path: "/api/public/v1/preview-links" + path(id), idempotent: true}, nil)
	return goneOnRetry(err)
}
