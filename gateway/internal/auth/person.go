package auth

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/principal"
	accessv1 "github.com/atrium-hq/atrium/proto/atrium/access/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

// The headers with which a person picks whom they act for.
const (
	AgencyHeader = "Atrium-Agency"
	SiteHeader   = "Atrium-Site"
)

// maxIDLen bounds the ids the headers may name; anything longer is no id.
const maxIDLen = 128

// Choice is what a request says about whom a person acts for: the
// Atrium-Agency and Atrium-Site headers, and the route's access rule.
type Choice struct {
	Agency, Site string
	Access       principal.Access
}

// Owners answers which agency owns a site (SiteOwners).
type Owners interface {
	Owner(ctx context.Context, siteID string) (SiteOwner, error)
}

// Principal is the principal of a request made with session s: the user,
// and, for a route of a tenant, the membership the request acts with.
//
// The agency is the Atrium-Agency header's, which must be one of the
// user's memberships; without it, their only or first membership. The
// site, for the routes bound to a site (and for those bound to a site or
// an agency when the header is sent), is the Atrium-Site header's, which
// must be a site the agency owns and, for an editor whose membership names
// sites, one of those; without it, an editor's only site. Each refusal is
// PermissionDenied naming what the person may use.
func (s *Session) Principal(ctx context.Context, c Choice, owners Owners) (principal.Principal, error) {
	p := principal.Principal{Kind: principal.KindUser, Subject: s.UserID, SessionID: s.ID}
	if c.Access.Caller != accessv1.Caller_CALLER_TENANT {
		// A person's own session (CALLER_PERSON) is theirs whatever the
		// agency; the others are not a member's business.
		return p, nil
	}
	if len(s.Memberships) == 0 {
		return p, status.Error(codes.PermissionDenied, "you are a member of no agency (any more): ask an agency's owner for an invitation")
	}
	m := s.Memberships[0]
	if a := strings.TrimSpace(c.Agency); a != "" {
		i := slices.IndexFunc(s.Memberships, func(m *crmv1.Membership) bool { return m.GetAgencyId() == a })
		if i < 0 {
			return p, status.Errorf(codes.PermissionDenied, "the %s header names %q, which is not an agency you are a member of; yours: %s",
				AgencyHeader, clip(a), agencies(s.Memberships))
		}
		m = s.Memberships[i]
	}
	role, err := principal.ParseRole(m.GetRole())
	if err != nil {
		return p, status.Errorf(codes.PermissionDenied, "your membership of agency %s has no role that can sign in (%q); ask its owner", m.GetAgencyId(), m.GetRole())
	}
	p.AgencyID, p.MemberID, p.Role = m.GetAgencyId(), m.GetMemberId(), role
	if role == principal.RoleClient {
		if p.ClientID = m.GetClientId().GetValue(); p.ClientID == "" {
			return p, status.Errorf(codes.PermissionDenied, "your client membership of agency %s names no client; ask its owner", p.AgencyID)
		}
	}
	b := c.Access.Binding
	if b != principal.BindingSite && b != principal.BindingSiteOrAgency {
		return p, nil
	}
	site := strings.TrimSpace(c.Site)
	editorSites := m.GetSiteIds()
	if role != principal.RoleEditor {
		editorSites = nil
	}
	if site == "" {
		if b == principal.BindingSite && len(editorSites) == 1 {
			p.SiteID = editorSites[0]
		}
		// Otherwise the judge says that the route needs a site.
		return p, nil
	}
	if len(editorSites) > 0 && !slices.Contains(editorSites, site) {
		return p, status.Errorf(codes.PermissionDenied, "the %s header names %q; as an editor of agency %s you may use only the sites %s",
			SiteHeader, clip(site), p.AgencyID, strings.Join(editorSites, ", "))
	}
	owner := SiteOwner{}
	if len(site) <= maxIDLen {
		if owner, err = owners.Owner(ctx, site); err != nil {
			return p, err
		}
	}
	if !owner.Found || owner.AgencyID != p.AgencyID {
		// An unknown site and another agency's answer alike: an agency
		// learns nothing of the others' sites.
		return p, status.Errorf(codes.PermissionDenied, "the %s header names %q, which is not a site of agency %s (the one this request acts for: see %s); send the id of one of its sites",
			SiteHeader, clip(site), p.AgencyID, AgencyHeader)
	}
	p.SiteID = site
	return p, nil
}

// agencies lists a user's agencies for a message: id (name).
func agencies(ms []*crmv1.Membership) string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = fmt.Sprintf("%s (%s, %s)", m.GetAgencyId(), m.GetAgencyName(), m.GetRole())
	}
	return strings.Join(out, ", ")
}

// clip shortens what a client sent for an error message.
func clip(s string) string {
	if len(s) > maxIDLen {
		return s[:maxIDLen] + "…"
	}
	return s
}
