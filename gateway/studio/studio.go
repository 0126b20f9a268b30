package studio

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	auditv1 "github.com/atrium-hq/atrium/proto/atrium/audit/v1"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	datav1 "github.com/atrium-hq/atrium/proto/atrium/data/v1"
	webhooksv1 "github.com/atrium-hq/atrium/proto/atrium/webhooks/v1"
)

// Prefix is the path the Studio is served under.
const Prefix = "/studio/"

// Config is what the gateway gives the Studio.
type Config struct {
	Gate  Gate
	Conns Conns
	// Version is Atrium's, shown in the footer.
	Version string
	Logger  *slog.Logger
	// Now is the clock (tests move it); time.Now when nil.
	Now func() time.Time
}

// Studio serves the console. It is an http.Handler for the paths under
// Prefix.
type Studio struct {
	cfg   Config
	mux   *routeMux
	pages *pages
	// The services' clients: the same generated clients, over the same
	// connections, as the JSON API's routes.
	collections   collectionsv1.CollectionsServiceClient
	assets        collectionsv1.AssetsServiceClient
	previews      collectionsv1.PreviewLinksServiceClient
	crm           crmv1.CRMServiceClient
	agencyClients crmv1.AgencyClientsServiceClient
	schema        collectionsv1.SchemaServiceClient
	people        crmv1.PeopleServiceClient
	sessions      crmv1.SessionServiceClient
	data          datav1.DataServiceClient
	actions       actionsv1.ActionsServiceClient
	reports       actionsv1.ReportsServiceClient
	webhooks      webhooksv1.WebhooksServiceClient
	audit         auditv1.AuditServiceClient
	// The admin services, for the operator's console (operator.go).
	crmAdmin         crmv1.CRMAdminServiceClient
	actionsAdmin     actionsv1.ActionsAdminServiceClient
	collectionsAdmin collectionsv1.CollectionsAdminServiceClient
}

// New builds the Studio: it parses every page's template once.
func New(cfg Config) (*Studio, error) {
	if cfg.Gate == nil {
		return nil, errors.New("studio: no gate")
	}
	for _, name := range []string{"collections", "crm", "data", "actions", "webhooks", "audit"} {
		if cfg.Conns[name] == nil {
			return nil, fmt.Errorf("studio: no connection to the %s service", name)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p, err := loadPages()
	if err != nil {
		return nil, err
	}
	c := cfg.Conns
	s := &Studio{cfg: cfg, mux: &routeMux{ServeMux: http.NewServeMux()}, pages: p,
		collections:      collectionsv1.NewCollectionsServiceClient(c["collections"]),
		assets:           collectionsv1.NewAssetsServiceClient(c["collections"]),
		previews:         collectionsv1.NewPreviewLinksServiceClient(c["collections"]),
		crm:              crmv1.NewCRMServiceClient(c["crm"]),
		agencyClients:    crmv1.NewAgencyClientsServiceClient(c["crm"]),
		schema:           collectionsv1.NewSchemaServiceClient(c["collections"]),
		people:           crmv1.NewPeopleServiceClient(c["crm"]),
		sessions:         crmv1.NewSessionServiceClient(c["crm"]),
		data:             datav1.NewDataServiceClient(c["data"]),
		actions:          actionsv1.NewActionsServiceClient(c["actions"]),
		reports:          actionsv1.NewReportsServiceClient(c["actions"]),
		webhooks:         webhooksv1.NewWebhooksServiceClient(c["webhooks"]),
		audit:            auditv1.NewAuditServiceClient(c["audit"]),
		crmAdmin:         crmv1.NewCRMAdminServiceClient(c["crm"]),
		actionsAdmin:     actionsv1.NewActionsAdminServiceClient(c["actions"]),
		collectionsAdmin: collectionsv1.NewCollectionsAdminServiceClient(c["collections"]),
	}
	s.routes()
	return s, nil
}

// ServeHTTP serves a request under Prefix.
func (s *Studio) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	if !strings.HasPrefix(r.URL.Path, Prefix) {
		r.URL.Path = Prefix
	}
	if err := checkText(r.URL.Path, r.URL.Query()); err != nil {
		s.fail(&visit{s: s, w: w, r: r}, err)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// routes registers every page. Each area of the console registers its own
// in its file: the paths under /studio/a/{agency}/ act for one of the
// person's agencies.
func (s *Studio) routes() {
	s.mux.HandleFunc("GET /studio/static/{file}", s.static)
	s.mux.HandleFunc("GET /studio/{$}", s.index)
	s.mux.HandleFunc("/studio/", s.notFound)
	s.signInRoutes()
	s.handle("GET /studio/a/{agency}/{$}", s.home)
	s.managerRoutes()
	s.contenttoolsRoutes()
	s.ownerRoutes()
	s.editorRoutes()
}

// routeMux is the console's mux, which remembers the patterns registered
// on it: Routes lists them, for the tests that walk every page.
type routeMux struct {
	*http.ServeMux
	patterns []string
}

func (m *routeMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.HandleFunc(pattern, h)
}

func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

// Routes are the patterns of every page of the public console ("GET
// /studio/a/{agency}/members", …), in the order they were registered: what
// a test walks to try every page with bad input.
func (s *Studio) Routes() []string { return slices.Clone(s.mux.patterns) }

// handle registers a page of an agency: the request is a visit of a
// signed-in person acting for the path's agency (visit.go).
func (s *Studio) handle(pattern string, page func(*visit) error) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		v, ok := s.begin(w, r)
		if !ok {
			return
		}
		if err := page(v); err != nil {
			s.fail(v, err)
		}
	})
}

func (s *Studio) notFound(w http.ResponseWriter, r *http.Request) {
	v := &visit{s: s, w: w, r: r}
	if sess, err := s.cfg.Gate.Session(r); err == nil {
		v.sess = sess
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, HEAD, POST")
		s.problem(v, http.StatusMethodNotAllowed, "This address does not take "+r.Method+" requests.", "Use the links and forms of the Studio's pages.")
		return
	}
	s.problem(v, http.StatusNotFound, "There is no page at this address.", "Check the address, or go back to the start page.")
}
