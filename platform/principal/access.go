package principal

import (
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/atrium-hq/atrium/platform/apperr"
	accessv1 "github.com/atrium-hq/atrium/proto/atrium/access/v1"
)

// Access is the access rule an RPC declares with the atrium.access.v1.access
// method option. Authorize is the only place it is judged, by the services'
// interceptor on every call and by the gateway before it parses a request.
type Access struct {
	Caller  accessv1.Caller
	Scope   Scope   // tenant callers only
	Binding Binding // tenant callers only
	// OpenToPublishedOnly marks the reads of a site's published content,
	// the only RPCs a published_only key may call (the proto's
	// open_to_published_only).
	OpenToPublishedOnly bool
	// Name is the operation as a refusal names it: the RPC
	// ("atrium.webhooks.v1.WebhooksService/ListWebhooks") by default, the
	// HTTP route ("GET /api/v1/webhooks") in the gateway.
	Name string
}

// Binding is the tenant a caller must act for.
type Binding string

const (
	BindingAgency Binding = "agency"
	BindingSite   Binding = "site"
	// BindingSiteOrAgency takes a key bound to either (or both); the RPC
	// serves each tenant its own objects.
	BindingSiteOrAgency Binding = "site or agency"
)

// Authorize returns nil if p may call an RPC whose rule is a, or the error
// to answer with: PermissionDenied, with a message that says what the
// caller lacks.
//
// The rules: a tenant RPC takes an API key or a service principal acting
// for a tenant (one that names an agency or site), carrying a's scope and
// bound to a's binding. An admin RPC takes the admin principal or a service
// acting for no tenant; an internal RPC only the latter. A service acting
// for a tenant is held to exactly what a key of that tenant could do. An
// RPC open to anyone takes every principal, the anonymous one included.
func Authorize(p Principal, a Access) error {
	switch a.Caller {
	case accessv1.Caller_CALLER_TENANT:
		who := "this API key"
		switch {
		case p.Kind == KindService && p.ActsForTenant():
			who = "this service principal"
		case p.Kind != KindKey:
			return apperr.PermissionDenied("this operation needs an API key, or a service principal acting for a tenant")
		}
		if p.PublishedOnly && !a.OpenToPublishedOnly {
			return apperr.PermissionDenied("%s is published_only (safe to embed in a web page): it may read the site's collections, their published items and an asset by id, and nothing else; %s is not among them", who, a.name())
		}
		if !p.HasScope(a.Scope) {
			return apperr.PermissionDenied("%s lacks the %s scope this operation needs; its scopes: %s", who, a.Scope, ScopeNames(p.Scopes))
		}
		switch {
		case a.Binding == BindingAgency && p.AgencyID == "":
			return apperr.PermissionDenied("%s is not bound to an agency; the CRM, data and action interfaces need a key issued with an agency_id", who)
		case a.Binding == BindingSite && p.SiteID == "":
			return apperr.PermissionDenied("%s is not bound to a site; the collections interface needs a key issued with a site_id", who)
		case a.Binding == BindingSiteOrAgency && p.SiteID == "" && p.AgencyID == "":
			return apperr.PermissionDenied("%s is bound to neither a site nor an agency; this operation needs a key issued with a site_id or an agency_id", who)
		}
		return nil
	case accessv1.Caller_CALLER_ADMIN:
		if p.Kind == KindAdmin || (p.Kind == KindService && !p.ActsForTenant()) {
			return nil
		}
		return apperr.PermissionDenied("this operation is for administrators only")
	case accessv1.Caller_CALLER_INTERNAL:
		if p.Kind == KindService && !p.ActsForTenant() {
			return nil
		}
		return apperr.PermissionDenied("this operation is internal to Atrium")
	case accessv1.Caller_CALLER_ANYONE:
		return nil
	}
	return apperr.PermissionDenied("this operation declares no access rule, so nobody may call it")
}

// name is the operation as a refusal names it.
func (a Access) name() string {
	if a.Name == "" {
		return "this operation"
	}
	return a.Name
}

// AccessOf returns the access rule gRPC method fullMethod
// ("/atrium.crm.v1.CRMService/ListProspects") declares, if it declares one.
func AccessOf(fullMethod string) (Access, bool) {
	if v, ok := accessCache.Load(fullMethod); ok {
		a, found := v.(Access)
		return a, found
	}
	a, ok := lookupAccess(fullMethod)
	if ok {
		accessCache.Store(fullMethod, a)
	} else {
		accessCache.Store(fullMethod, false)
	}
	return a, ok
}

var accessCache sync.Map // full method -> Access, or false when it declares none

func lookupAccess(fullMethod string) (Access, bool) {
	service, method, ok := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if !ok {
		return Access{}, false
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(service))
	if err != nil {
		return Access{}, false
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return Access{}, false
	}
	md := sd.Methods().ByName(protoreflect.Name(method))
	if md == nil {
		return Access{}, false
	}
	return MethodAccess(md)
}

// MethodAccess returns the access rule a method descriptor declares.
func MethodAccess(md protoreflect.MethodDescriptor) (Access, bool) {
	opts, ok := md.Options().(*descriptorpb.MethodOptions)
	if !ok || opts == nil || !proto.HasExtension(opts, accessv1.E_Access) {
		return Access{}, false
	}
	rule, _ := proto.GetExtension(opts, accessv1.E_Access).(*accessv1.Access)
	a := Access{Caller: rule.GetCaller(), OpenToPublishedOnly: rule.GetOpenToPublishedOnly(),
		Name: string(md.Parent().FullName()) + "/" + string(md.Name())}
	switch rule.GetScope() {
	case accessv1.Scope_SCOPE_READ:
		a.Scope = ScopeRead
	case accessv1.Scope_SCOPE_WRITE:
		a.Scope = ScopeWrite
	}
	switch rule.GetBinding() {
	case accessv1.Binding_BINDING_AGENCY:
		a.Binding = BindingAgency
	case accessv1.Binding_BINDING_SITE:
		a.Binding = BindingSite
	case accessv1.Binding_BINDING_SITE_OR_AGENCY:
		a.Binding = BindingSiteOrAgency
	}
	if a.Caller == accessv1.Caller_CALLER_TENANT && (a.Scope == "" || a.Binding == "") {
		return Access{}, false // a tenant rule must say both
	}
	if a.OpenToPublishedOnly && (a.Caller != accessv1.Caller_CALLER_TENANT || a.Scope != ScopeRead || a.Binding != BindingSite) {
		// A published_only key is a site's read key: opening anything
		// else to it is a mistake in the proto, which no caller passes.
		return Access{}, false
	}
	return a, a.Caller != accessv1.Caller_CALLER_UNSPECIFIED
}
