package auth

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/principal"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

// SiteOwner is the agency a site belongs to (and the client it is for).
type SiteOwner struct {
	Found    bool
	AgencyID string
	ClientID string
}

// SiteOwners answers which agency owns a site, asking the collections
// service and caching the answer for a short TTL: a person's Atrium-Site
// must be a site of the agency they act for. atrium.collections.site.*
// events evict a site at once.
type SiteOwners struct {
	client  collectionsv1.SiteOwnerServiceClient
	signer  *principal.Signer
	ttl     time.Duration
	maxSize int
	now     func() time.Time
	group   singleflight.Group

	mu      sync.Mutex
	entries map[string]siteEntry
}

type siteEntry struct {
	owner SiteOwner
	until time.Time
}

// NewSiteOwners returns a cache asking client, holding up to maxSize sites
// for ttl each.
func NewSiteOwners(client collectionsv1.SiteOwnerServiceClient, signer *principal.Signer, ttl time.Duration, maxSize int) *SiteOwners {
	return &SiteOwners{client: client, signer: signer, ttl: ttl, maxSize: maxSize, now: time.Now, entries: map[string]siteEntry{}}
}

// Owner returns the owner of site id; Found is false for an unknown site.
// The error is Unavailable when the collections service cannot be asked.
func (o *SiteOwners) Owner(ctx context.Context, id string) (SiteOwner, error) {
	now := o.now()
	o.mu.Lock()
	e, ok := o.entries[id]
	o.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.owner, nil
	}
	v, err, _ := o.group.Do(id, func() (any, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		resp, err := o.client.GetSiteOwner(o.signer.OutgoingContext(cctx, gatewayPrincipal), &collectionsv1.GetSiteOwnerRequest{SiteId: id})
		var owner SiteOwner
		switch status.Code(err) {
		case codes.OK:
			owner = SiteOwner{Found: true, AgencyID: resp.GetAgencyId(), ClientID: resp.GetClientId()}
		case codes.NotFound, codes.InvalidArgument:
			// An id that is no site (or not even an id) owns nothing.
		default:
			return nil, status.Error(codes.Unavailable, fmt.Sprintf("cannot check the site of the Atrium-Site header right now: %v", err))
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		if len(o.entries) >= o.maxSize {
			for k := range o.entries {
				delete(o.entries, k)
				if len(o.entries) < o.maxSize*9/10 {
					break
				}
			}
		}
		o.entries[id] = siteEntry{owner: owner, until: o.now().Add(o.ttl)}
		return owner, nil
	})
	if err != nil {
		return SiteOwner{}, err
	}
	return v.(SiteOwner), nil
}

// Evict forgets a site, so that its next use asks again: the gateway calls
// it when a site is created or its owner changes.
func (o *SiteOwners) Evict(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.entries, id)
}
