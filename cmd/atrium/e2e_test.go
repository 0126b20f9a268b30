package main

import (
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/atrium-hq/atrium/platform/objstore/objstoretest"
	"github.com/atrium-hq/atrium/platform/pgtest"
)

func TestMain(m *testing.M) {
	// Every response of a stack is checked against its OpenAPI document
	// (contract_test.go).
	http.DefaultClient.Transport = contractTransport{base: http.DefaultTransport}
	pgtest.Main(m)
	removeBinaries()
}

// The same end-to-end suite runs on the embedded defaults (memory store,
// embedded NATS) and on the production adapters (PostgreSQL, external
// NATS), driven over HTTP only, as a user would.

func TestEndToEndMemory(t *testing.T) {
	runSuite(t, func(t *testing.T, extra ...string) *stack {
		s := startStack(t, extra...)
		// Each memory stack has a NATS server of its own, which sees only
		// its events: every one must be its definition's.
		checkPublishedEvents(t, s)
		return s
	})
}

func TestEndToEndPostgres(t *testing.T) {
	natsURL := natstest.URL(t)
	runSuite(t, func(t *testing.T, extra ...string) *stack {
		return startStack(t, append([]string{"--database-url=" + migratedDatabase(t), "--nats-url=" + natsURL}, extra...)...)
	})
}

func runSuite(t *testing.T, start func(t *testing.T, extra ...string) *stack) {
	w := newActionWorld(t)
	s := start(t, append(w.flags(), "--webhook-retry-schedule="+testRetrySchedule)...)
	for _, tt := range suiteTests(w) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, s)
		})
	}
	t.Run("RevocationIsPrompt", func(t *testing.T) {
		t.Parallel()
		// A long cache TTL: only the revocation event can make this prompt.
		testRevocationIsPrompt(t, start(t, "--key-cache-ttl=1m"))
	})
	t.Run("PrivateAddresses", func(t *testing.T) {
		t.Parallel()
		// Without the world's --allow-private-fetch.
		strict := start(t)
		testActionsPrivateAddresses(t, strict)
		testWebhooksPrivateAddresses(t, strict)
	})
	t.Run("ActionRunsQueue", func(t *testing.T) {
		t.Parallel()
		testActionRunsQueue(t, start(t, append(w.flags(), "--action-workers=1", "--agency-max-queued=2")...), w)
	})
	t.Run("AssetsSVG", func(t *testing.T) {
		t.Parallel()
		testAssetsSVG(t, start(t, "--allow-svg-assets"))
	})
	t.Run("AssetsCutShortAndStalled", func(t *testing.T) {
		t.Parallel()
		testAssetsCutShortAndStalled(t, start(t, "--request-timeout=2s"))
	})
}

// TestEndToEndS3 runs the all-in-one stack with its files in a bucket of
// the local S3-compatible server (versitygw, make services-up), on
// PostgreSQL: the assets' tests and the generated images, through the S3
// adapter.
func TestEndToEndS3(t *testing.T) {
	w := newActionWorld(t)
	srv := objstoretest.S3(t)
	env := srv.Env()
	s := startStackWith(t, func(c *serveConfig) {
		c.objects.Env = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	}, append(append([]string{"--database-url=" + migratedDatabase(t), "--nats-url=" + natstest.URL(t)}, srv.Flags()...), w.flags()...)...)
	for _, tt := range suiteTests(w) {
		if !strings.HasPrefix(tt.name, "Asset") && tt.name != "ActionsEveryAction" {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, s)
		})
	}
}

type suiteTest struct {
	name string
	fn   func(*testing.T, *stack)
}

// suiteTests are the end-to-end tests every deployment passes: the
// all-in-one on memory and on PostgreSQL, and the separate processes
// (cluster_test.go). Each makes its own tenants, so they run in parallel on
// one stack. w is the outside world the stack's actions were pointed at.
func suiteTests(w *actionWorld) []suiteTest {
	return []suiteTest{
		{"CRMListShapes", testCRMListShapes},
		{"MCP", testMCP},
		{"CRMOrderingAndPaging", testCRMOrderingAndPaging},
		{"CRMLimits", testCRMLimits},
		{"CRMTenancy", testCRMTenancy},
		{"Authentication", testAuthentication},
		{"PeopleSessions", testPeopleSessions},
		{"RolesEveryRoute", testRolesEveryRoute},
		{"TenantSchemaRoutes", testTenantSchemaRoutes},
		{"ErrorContract", testErrorContract},
		{"RequestLimits", testRequestLimits},
		{"AdminProvisioning", testAdminProvisioning},
		{"AdminValidation", testAdminValidation},
		{"AdminLists", testAdminLists},
		{"AdminSiteOwners", testSiteOwners},
		{"EventsReachNATS", testEventsReachNATS},
		{"Probes", testProbes},
		{"CollectionsEndpoints", testCollectionsEndpoints},
		{"CollectionsValidation", testCollectionsValidation},
		{"CollectionsSystem", testCollectionsSystem},
		{"CollectionsTenancy", testCollectionsTenancy},
		{"CollectionsPaging", testCollectionsPaging},
		{"CollectionsConcurrentMerge", testCollectionsConcurrentMerge},
		{"CollectionsEvents", testCollectionsEvents},
		{"CollectionsRevisions", testCollectionsRevisions},
		{"CollectionsAdmin", testCollectionsAdmin},
		{"CollectionsSearch", testCollectionsSearch},
		{"CollectionsExpand", testCollectionsExpand},
		{"CollectionsFields", testCollectionsFields},
		{"CollectionsPublishedOnly", testCollectionsPublishedOnly},
		{"PublishedOnlyEveryRoute", testPublishedOnlyEveryRoute},
		{"CollectionsCORS", testCollectionsCORS},
		{"CollectionsLocales", testCollectionsLocales},
		{"Realtime", testRealtime},
		{"BrowserPage", testBrowserPage},
		{"AssetsUpload", testAssetsUpload},
		{"AssetsRefusals", testAssetsRefusals},
		{"AssetsLifecycle", testAssetsLifecycle},
		{"AssetsTenancy", testAssetsTenancy},
		{"AssetsEvents", testAssetsEvents},
		{"AssetFields", testAssetFields},
		{"CollectionsSchedule", testCollectionsSchedule},
		{"CollectionsScheduleRules", testCollectionsScheduleRules},
		{"PreviewLinks", testPreviewLinks},
		{"PreviewLinksValidation", testPreviewLinksValidation},
		{"PreviewLinksExpire", testPreviewLinksExpire},
		{"PreviewLinksTenancy", testPreviewLinksTenancy},
		{"SDKPreviewsAndSchedule", testSDKPreviewsAndSchedule},
		{"DataRead", testDataRead},
		{"DataRules", testDataRules},
		{"DataPaging", testDataPaging},
		{"DataClientAccess", testDataClientAccess},
		{"DataCursor", testDataCursor},
		{"DataLoadUnknownClient", testDataLoadUnknownClient},
		{"DataRowValues", testDataRowValues},
		{"ClientSettings", testClientSettings},
		{"BulkLoad", testBulkLoad},
		{"ActionsDiscovery", testActionsDiscovery},
		{"ActionsValidation", testActionsValidation},
		{"ActionsEveryAction", func(t *testing.T, s *stack) { testActionsEveryAction(t, s, w) }},
		{"ActionsCredits", testActionsCredits},
		{"Reports", testReports},
		{"ActionsIdempotency", testActionsIdempotency},
		{"ActionsRefresh", func(t *testing.T, s *stack) { testActionsRefresh(t, s, w) }},
		{"ActionsAutoDeploy", testActionsAutoDeploy},
		{"ActionsUnlinkAppliesOnItsEvent", testActionsUnlinkAppliesOnItsEvent},
		{"ActionsEvents", testActionsEvents},
		{"ActionsTenancy", testActionsTenancy},
		{"ActionRuns", testActionRuns},
		{"ActionRunsAreTheAgencys", testActionRunsAreTheAgencys},
		{"ActionRunsAsync", testActionRunsAsync},
		{"ActionRunsWait", func(t *testing.T, s *stack) { testActionRunsWait(t, s, w) }},
		{"ActionRunsCancel", func(t *testing.T, s *stack) { testActionRunsCancel(t, s, w) }},
		{"ActionRunsIdempotentAsync", func(t *testing.T, s *stack) { testActionRunsIdempotentAsync(t, s, w) }},
		{"ActionRunsTenancy", testActionRunsTenancy},
		{"ActionRunsEvents", testActionRunsEvents},
		{"SDKRuns", testSDKRuns},
		{"Schedules", testSchedules},
		{"SchedulesCreditsRunOut", testSchedulesCreditsRunOut},
		{"WebhooksEndpoints", testWebhooksEndpoints},
		{"WebhooksValidation", testWebhooksValidation},
		{"WebhooksEveryFamily", testWebhooksEveryFamily},
		{"WebhooksRetriesAndGone", testWebhooksRetriesAndGone},
		{"WebhooksRotation", testWebhooksRotation},
		{"WebhooksLogAndReplay", testWebhooksLogAndReplay},
		{"WebhooksTenancy", testWebhooksTenancy},
		{"WebhooksHangingEndpoint", testWebhooksHangingEndpoint},
		{"WebhooksScheduledPublish", testWebhooksScheduledPublish},
		{"SDK", testSDK},
		{"SDKRetriesNeverRunTwice", testSDKRetriesNeverRunTwice},
		{"AuditTrail", testAuditTrail},
		{"StudioSignIn", testStudioSignIn},
		{"StudioManager", func(t *testing.T, s *stack) { testStudioManager(t, s, w) }},
		{"StudioReports", testStudioReports},
		{"StudioRevisions", testStudioRevisions},
		{"StudioAssets", testStudioAssets},
		{"StudioSchema", testStudioSchema},
		{"StudioEditor", testStudioEditor},
		{"StudioEditorDrop", testStudioEditorDrop},
		{"StudioOperator", testStudioOperator},
		{"StudioOwner", testStudioOwner},
		{"StudioClientResults", testStudioClientResults},
		{"StudioHostileInput", testStudioHostileInput},
	}
}

// tenant is an agency with a member, a site and keys, made through the
// admin API.
type tenant struct {
	agency, member, site string
	read, write          string // API keys
}

func (s *stack) adminCall(t testing.TB, method, path string, body any) response {
	t.Helper()
	return call(t, method, s.admin+path, testAdminToken, body)
}

// create POSTs to the admin API and returns the object under key.
func (s *stack) create(t testing.TB, path, key string, body any) map[string]any {
	t.Helper()
	r := s.adminCall(t, "POST", path, body)
	wantStatus(t, r, http.StatusCreated)
	obj, ok := r.json[key].(map[string]any)
	if !ok {
		t.Fatalf("POST %s: no %q object in %s", path, key, r.body)
	}
	return obj
}

func (s *stack) newKey(t testing.TB, body map[string]any) string {
	t.Helper()
	body["name"] = "test key"
	return s.create(t, "/admin/v1/keys", "key", body)["secret"].(string)
}

func (s *stack) newTenant(t testing.TB) tenant {
	t.Helper()
	var tn tenant
	tn.agency = s.create(t, "/admin/v1/agencies", "agency", map[string]any{"name": "Agency " + t.Name()})["id"].(string)
	tn.member = s.create(t, "/admin/v1/agencies/"+tn.agency+"/members", "member", map[string]any{"name": "Ana", "email": "ana@example.com"})["id"].(string)
	// The agency's own site: its keys are bound to both.
	tn.site = s.create(t, "/admin/v1/sites", "site", map[string]any{"name": "Site", "agency_id": tn.agency})["id"].(string)
	tn.read = s.newKey(t, map[string]any{"scopes": []string{"read"}, "agency_id": tn.agency, "site_id": tn.site})
	tn.write = s.newKey(t, map[string]any{"scopes": []string{"read", "write"}, "agency_id": tn.agency, "site_id": tn.site})
	return tn
}

func (s *stack) newProspect(t testing.TB, tn tenant, name string) map[string]any {
	t.Helper()
	return s.create(t, "/admin/v1/agencies/"+tn.agency+"/prospects", "prospect", map[string]any{
		"business_name": name, "website_url": "https://" + strings.ToLower(strings.ReplaceAll(name, " ", "-")) + ".example/home",
	})
}

func (s *stack) list(t *testing.T, path, key string) []map[string]any {
	t.Helper()
	r := call(t, "GET", s.api+path, key, nil)
	wantStatus(t, r, http.StatusOK)
	if len(r.json) != 1 {
		t.Fatalf("GET %s: top-level keys %v, want only data", path, slices.Collect(maps.Keys(r.json)))
	}
	raw, ok := r.json["data"].([]any)
	if !ok {
		t.Fatalf("GET %s: data is not an array: %s", path, r.body)
	}
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		out[i] = v.(map[string]any)
	}
	return out
}

func ids(rows []map[string]any) []string {
	out := []string{}
	for _, r := range rows {
		out = append(out, r["id"].(string))
	}
	return out
}

var (
	timestampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$`)
	dateRE      = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

func wantKeys(t *testing.T, obj map[string]any, keys ...string) {
	t.Helper()
	got := slices.Sorted(maps.Keys(obj))
	slices.Sort(keys)
	if !slices.Equal(got, keys) {
		t.Fatalf("fields = %v, want exactly %v", got, keys)
	}
}

func wantTimestamp(t *testing.T, obj map[string]any, field string) {
	t.Helper()
	if s, ok := obj[field].(string); !ok || !timestampRE.MatchString(s) {
		t.Fatalf("%s = %#v, want an ISO 8601 UTC timestamp ending in Z", field, obj[field])
	}
}

func eventually(t *testing.T, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", within)
		}
		time.Sleep(50 * time.Millisecond) // why sleep: polls what a user can see over HTTP, which has no push form
	}
}
