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
	// Resource is the part of a tenant's work the RPC touches, on which
	// the caller needs Scope (tenant callers only).
	Resource Resource
	// OpenToClient marks the reads a member with the client role may call;
	// ClientField, when set, is the request field that must name their
	// client (AuthorizeRequest checks it).
	OpenToClient bool
	ClientField  string
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
// The rules: a tenant RPC takes an API key, a signed-in member of an
// agency, or a service principal acting for a tenant (one that names an
// agency or site), holding a's scope on a's resource and bound to a's
// binding. A key (and a service acting for a tenant) holds its scopes on
// every resource but the people-only ones; a person holds what their role
// grants (roles.go, read from the proto). An admin RPC takes the admin
// principal or a service acting for no tenant; an internal RPC only the
// latter. A service acting for a tenant is held to exactly what a key of
// that tenant could do. An RPC open to anyone takes every principal, the
// anonymous one included.
//
// Authorize judges what can be judged before the request is read; a
// client_field is checked by AuthorizeRequest once it is.
func Authorize(p Principal, a Access) error {
	switch a.Caller {
	case accessv1.Caller_CALLER_TENANT:
		who := "this API key"
		switch {
		case p.Kind == KindService && p.ActsForTenant():
			who = "this service principal"
		case p.Kind == KindUser && p.AgencyID != "" && p.Role.Valid():
			who = "a member with the " + string(p.Role) + " role"
		case p.Kind != KindKey:
			return apperr.PermissionDenied("this operation needs an API key, a signed-in member of an agency, or a service principal acting for a tenant")
		}
		if p.PublishedOnly && !a.OpenToPublishedOnly {
			return apperr.PermissionDenied("%s is published_only (safe to embed in a web page): it may read the site's collections, their published items and an asset by id, and nothing else; %s is not among them", who, a.name())
		}
		if !p.May(a.Resource, a.Scope) {
			switch {
			case p.Kind == KindUser:
				return apperr.PermissionDenied("%s may not %s %s (%s); the roles that may: %s", who, verb(a.Scope), a.Resource, a.name(), rolesThatMay(a.Resource, a.Scope))
			case PeopleOnly(a.Resource) && p.HasScope(a.Scope):
				return apperr.PermissionDenied("%s cannot %s %s, whatever its scopes: only people may (the roles that may: %s), signed in", who, verb(a.Scope), a.Resource, rolesThatMay(a.Resource, a.Scope))
			}
			return apperr.PermissionDenied("%s lacks the %s scope this operation needs; its scopes: %s", who, a.Scope, ScopeNames(p.Scopes))
		}
		if p.ClientID != "" && !a.OpenToClient {
			return apperr.PermissionDenied("%s reads only its client's datasets, runs and reports; %s is not among them", who, a.name())
		}
		switch {
		case a.Binding == BindingAgency && p.AgencyID == "":
			return apperr.PermissionDenied("%s is not bound to an agency; the CRM, data and action interfaces need a key issued with an agency_id", who)
		case a.Binding == BindingSite && p.SiteID == "":
			if p.Kind == KindUser {
				return apperr.PermissionDenied("%s acts for no site; the collections interface needs one: send the header Atrium-Site with one of the agency's sites", who)
			}
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
	case accessv1.Caller_CALLER_PERSON:
		if p.Kind == KindUser && p.Subject != "" {
			return nil
		}
		return apperr.PermissionDenied("this operation is for a signed-in person (a session cookie); an API key or a token cannot call it")
	}
	return apperr.PermissionDenied("this operation declares no access rule, so nobody may call it")
}

// AuthorizeRequest judges what Authorize could not before the request was
// read: a member with the client role must name their own client in the
// rule's client_field.
func AuthorizeRequest(p Principal, a Access, req any) error {
	if p.ClientID == "" || a.ClientField == "" {
		return nil
	}
	m, ok := req.(proto.Message)
	if !ok {
		return apperr.PermissionDenied("%s cannot be judged for a client member: its request is not a message", a.name())
	}
	fd := m.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(a.ClientField))
	if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() {
		return apperr.PermissionDenied("%s declares client_field %q, which its request has no string field of: nobody limited to a client may call it", a.name(), a.ClientField)
	}
	if got := m.ProtoReflect().Get(fd).String(); got != p.ClientID {
		return apperr.PermissionDenied("a member with the client role reads only their client: %s must be %q; got %q", a.ClientField, p.ClientID, got)
	}
	return nil
}

// verb is what a scope lets a caller do, for messages.
func verb(s Scope) string {
	if s == ScopeWrite {
		return "change"
	}
	return "read"
}

// rolesThatMay lists the roles granting s on r, for messages.
func rolesThatMay(r Resource, s Scope) string {
	var names []string
	for _, role := range Roles() {
		if role.Grants(r, s) {
			names = append(names, string(role))
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
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
		Resource: resourceOf(rule.GetResource()), OpenToClient: rule.GetOpenToClient(), ClientField: rule.GetClientField(),
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
	if a.Caller == accessv1.Caller_CALLER_TENANT && (a.Scope == "" || a.Binding == "" || a.Resource == "") {
		return Access{}, false // a tenant rule must say all three
	}
	if (a.OpenToClient && (a.Caller != accessv1.Caller_CALLER_TENANT || a.Scope != ScopeRead)) || (a.ClientField != "" && !a.OpenToClient) {
		// A client member only reads, and a client_field means nothing
		// on an RPC not open to them: a mistake in the proto, which no
		// caller passes.
		return Access{}, false
	}
	if a.ClientField != "" {
		if in := md.Input().Fields().ByName(protoreflect.Name(a.ClientField)); in == nil || in.Kind() != protoreflect.StringKind || in.IsList() {
			return Access{}, false
		}
	}
	if a.OpenToPublishedOnly && (a.Caller != accessv1.Caller_CALLER_TENANT || a.Scope != ScopeRead || a.Binding != BindingSite) {
		// A published_only key is a site's read key: opening anything
		// else to it is a mistake in the proto, which no caller passes.
		return Access{}, false
	}
	return a, a.Caller != accessv1.Caller_CALLER_UNSPECIFIED
}
