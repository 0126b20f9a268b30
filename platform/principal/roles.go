package principal

import (
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/atrium-hq/atrium/platform/apperr"
	accessv1 "github.com/atrium-hq/atrium/proto/atrium/access/v1"
)

// Resource is a part of a tenant's work on which a caller holds a scope
// (the proto's atrium.access.v1.Resource): "content", "members", …
type Resource string

// Role is what a member of an agency may do (the proto's
// atrium.access.v1.Role): "owner", "manager", "editor", "viewer", "client".
type Role string

// The roles, by name. What each grants is read from the proto (Grants).
const (
	RoleOwner   Role = "owner"
	RoleManager Role = "manager"
	RoleEditor  Role = "editor"
	RoleViewer  Role = "viewer"
	RoleClient  Role = "client"
)

// grant is one resource with one scope.
type grant struct {
	resource Resource
	scope    Scope
}

// model is the roles and resources as the proto declares them, read once.
type model struct {
	resources  []Resource // in the enum's order
	peopleOnly map[Resource]bool
	roles      []Role // in the enum's order
	grants     map[Role]map[grant]bool
}

var (
	modelOnce sync.Once
	theModel  model
)

func loaded() *model {
	modelOnce.Do(func() { theModel = readModel() })
	return &theModel
}

// enumName turns RESOURCE_CONTENT into "content".
func enumName(v protoreflect.EnumValueDescriptor, prefix string) string {
	return strings.ToLower(strings.TrimPrefix(string(v.Name()), prefix))
}

func readModel() model {
	m := model{peopleOnly: map[Resource]bool{}, grants: map[Role]map[grant]bool{}}
	rs := accessv1.Resource_RESOURCE_UNSPECIFIED.Descriptor().Values()
	for i := range rs.Len() {
		v := rs.Get(i)
		if v.Number() == 0 {
			continue
		}
		r := Resource(enumName(v, "RESOURCE_"))
		m.resources = append(m.resources, r)
		if opts, ok := v.Options().(*descriptorpb.EnumValueOptions); ok && opts != nil {
			m.peopleOnly[r], _ = proto.GetExtension(opts, accessv1.E_PeopleOnly).(bool)
		}
	}
	roles := accessv1.Role_ROLE_UNSPECIFIED.Descriptor().Values()
	for i := range roles.Len() {
		v := roles.Get(i)
		if v.Number() == 0 {
			continue
		}
		role := Role(enumName(v, "ROLE_"))
		m.roles = append(m.roles, role)
		set := map[grant]bool{}
		if opts, ok := v.Options().(*descriptorpb.EnumValueOptions); ok && opts != nil {
			g, _ := proto.GetExtension(opts, accessv1.E_Grants).(*accessv1.Grants)
			for _, r := range g.GetRead() {
				set[grant{Resource(enumName(r.Descriptor().Values().ByNumber(r.Number()), "RESOURCE_")), ScopeRead}] = true
			}
			for _, r := range g.GetWrite() {
				set[grant{Resource(enumName(r.Descriptor().Values().ByNumber(r.Number()), "RESOURCE_")), ScopeWrite}] = true
			}
		}
		m.grants[role] = set
	}
	return m
}

// Resources lists every resource, in the proto's order.
func Resources() []Resource { return slices.Clone(loaded().resources) }

// Roles lists every role, in the proto's order (owner first).
func Roles() []Role { return slices.Clone(loaded().roles) }

// PeopleOnly reports whether r is one only people may hold a scope on
// (members, keys, the audit trail): no API key may, whatever its scopes.
func PeopleOnly(r Resource) bool { return loaded().peopleOnly[r] }

// Grants reports whether role grants scope s on resource r.
func (role Role) Grants(r Resource, s Scope) bool { return loaded().grants[role][grant{r, s}] }

// Valid reports whether role is one the proto declares.
func (role Role) Valid() bool { _, ok := loaded().grants[role]; return ok }

// RoleNames is the roles as a comma-separated list for messages.
func RoleNames() string {
	names := make([]string, 0, len(loaded().roles))
	for _, r := range loaded().roles {
		names = append(names, string(r))
	}
	return strings.Join(names, ", ")
}

// ParseRole checks a role's name as a request sends it.
func ParseRole(name string) (Role, error) {
	r := Role(strings.TrimSpace(name))
	if !r.Valid() {
		return "", apperr.Invalid("role must be one of %s; got %q", RoleNames(), name)
	}
	return r, nil
}

// May reports whether p holds scope s on resource r: a person through
// their role, a key or a service acting for a tenant through its scopes on
// every resource but the people-only ones.
func (p Principal) May(r Resource, s Scope) bool {
	if p.Kind == KindUser {
		return p.Role.Grants(r, s)
	}
	return p.HasScope(s) && !PeopleOnly(r)
}

// resourceOf converts the proto's enum.
func resourceOf(r accessv1.Resource) Resource {
	if r == accessv1.Resource_RESOURCE_UNSPECIFIED {
		return ""
	}
	return Resource(enumName(r.Descriptor().Values().ByNumber(r.Number()), "RESOURCE_"))
}
