package app_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pgdb"
	"github.com/atrium-hq/atrium/platform/pgtest"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/postgres"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The use cases on the memory store, with the CRM and the data service
// played by small in-process doubles and a text generator that can be
// told to fail or to wait. The adapters have their own tests against real
// servers; the end-to-end suite runs all of it together.

type directory struct {
	mu    sync.Mutex
	links map[string]action.Client // agency|client
}

func (d *directory) LinkedClient(_ context.Context, agency, client string) (action.Client, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.links[agency+"|"+client]
	return c, ok, nil
}

func (d *directory) AgencyExists(_ context.Context, agency string) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k := range d.links {
		if strings.HasPrefix(k, agency+"|") {
			return true, nil
		}
	}
	return false, nil
}

// records is the data service: rows by resource and id.
type records struct {
	mu    sync.Mutex
	rows  map[string]map[string]map[string]any
	fail  atomic.Bool
	calls atomic.Int32
	// gate, when set, holds every write until it is closed; reject
	// refuses a write holding a row whose keyword is it (all or nothing,
	// as the data service does).
	gate   chan struct{}
	reject string
	// mostBlogs is the most blog rows one write carried.
	mostBlogs atomic.Int32
	// heldBlogs counts the blog rows of the writes waiting at the gate.
	heldBlogs atomic.Int32
}

func (r *records) WriteRecords(_ context.Context, client string, writes []action.RecordWrite) error {
	r.calls.Add(1)
	if r.gate != nil {
		n := int32(0)
		for _, w := range writes {
			if w.Resource == "blogs" {
				n += int32(len(w.Rows))
			}
		}
		r.heldBlogs.Add(n)
		<-r.gate
	}
	if r.fail.Load() {
		return errors.New("data service unavailable")
	}
	for _, w := range writes {
		if w.Resource == "blogs" && int32(len(w.Rows)) > r.mostBlogs.Load() {
			r.mostBlogs.Store(int32(len(w.Rows)))
		}
		for _, row := range w.Rows {
			if r.reject != "" && row["keyword"] == r.reject {
				return errors.New("bad row")
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range writes {
		if r.rows[w.Resource] == nil {
			r.rows[w.Resource] = map[string]map[string]any{}
		}
		for _, row := range w.Rows {
			id := row["id"].(string)
			old, ok := r.rows[w.Resource][id]
			if !ok && w.Mode == action.Update {
				continue
			}
			if ok && older(row, old) {
				continue // as the data service does: an earlier state written late
			}
			r.rows[w.Resource][id] = row
		}
	}
	return nil
}

// older reports whether row gives an updated_at before stored's.
func older(row, stored map[string]any) bool {
	a, errA := time.Parse(time.RFC3339Nano, fmt.Sprint(row["updated_at"]))
	b, errB := time.Parse(time.RFC3339Nano, fmt.Sprint(stored["updated_at"]))
	return errA == nil && errB == nil && a.Before(b)
}

// states returns the status of each action_runs row, by run id.
func (r *records) states() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{}
	for id, row := range r.rows["action_runs"] {
		out[id], _ = row["status"].(string)
	}
	return out
}

func (r *records) GetRecord(_ context.Context, client, resource, id string) (map[string]any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	row, ok := r.rows[resource][id]
	if !ok {
		return nil, app.ErrNotFound
	}
	return row, nil
}

func (r *records) count(resource string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.rows[resource])
}

// text writes every field, or fails, or waits for release; suffix ends
// every field it writes.
type text struct {
	err     error
	release chan struct{}
	calls   atomic.Int32
	suffix  string
}

func (g *text) Generate(ctx context.Context, req provider.TextRequest) (provider.Text, error) {
	g.calls.Add(1)
	if g.release != nil {
		select {
		case <-g.release:
		case <-ctx.Done():
			return provider.Text{}, ctx.Err()
		}
	}
	if g.err != nil {
		return provider.Text{}, g.err
	}
	out := provider.Text{Fields: map[string]string{}, Model: "test-model"}
	for _, f := range req.Fields {
		out.Fields[f.Name] = "A " + f.Name + " about " + req.Inputs["keyword"] + " for a test" + g.suffix
	}
	return out, nil
}

type env struct {
	// pending returns the events the store's outbox holds.
	pending func() []outbox.Event
	store   app.Store
	dir     *directory
	records *records
	text    *text
	now     atomic.Pointer[time.Time]
	// tick, when set, makes every reading of the clock tick past the last
	// (ticks counts them), as a real clock does between a run's states.
	tick, ticks atomic.Int64
	actions     *app.Actions
	agency      string
	client      action.Client

	// providers are the ports the actions work through: text, and the
	// others a test sets.
	providers *action.Providers
	clock     app.Clock
	cfg       app.Config
}

// stores are the two adapters every use-case test runs on.
var stores = []struct {
	name string
	open func(t *testing.T) (app.Store, func() []outbox.Event)
}{
	{"Memory", func(t *testing.T) (app.Store, func() []outbox.Event) {
		db := memdb.New(nil)
		return memory.New(db), db.Outbox().(*outbox.Memory).Pending
	}},
	{"Postgres", func(t *testing.T) (app.Store, func() []outbox.Event) {
		pool := pgtest.NewPool(t, postgres.Migrations())
		return postgres.New(pgdb.NewDB(pool, nil)), func() []outbox.Event {
			rows, err := pool.Query(context.Background(), `SELECT id, subject, payload FROM outbox ORDER BY seq`)
			if err != nil {
				panic(err)
			}
			var out []outbox.Event
			for rows.Next() {
				var e outbox.Event
				if err := rows.Scan(&e.ID, &e.Subject, &e.Payload); err != nil {
					panic(err)
				}
				out = append(out, e)
			}
			return out
		}
	}},
}

// onEveryStore runs a use-case test on each store.
func onEveryStore(t *testing.T, test func(t *testing.T, open func(*testing.T, app.Config) *env)) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			test(t, func(t *testing.T, cfg app.Config) *env { return newEnvOn(t, cfg, st.open) })
		})
	}
}

func TestMain(m *testing.M) { pgtest.Main(m) }

func newEnv(t *testing.T, cfg app.Config) *env { return newEnvOn(t, cfg, stores[0].open) }

func newEnvOn(t *testing.T, cfg app.Config, open func(*testing.T) (app.Store, func() []outbox.Event)) *env {
	t.Helper()
	e := &env{dir: &directory{links: map[string]action.Client{}}, records: &records{rows: map[string]map[string]map[string]any{}}, text: &text{}}
	e.store, e.pending = open(t)
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	e.now.Store(&now)
	e.agency = uuid.NewString()
	e.client = action.Client{ID: uuid.NewString(), Name: "Bakery", Domain: "bakery.example"}
	e.dir.links[e.agency+"|"+e.client.ID] = e.client
	p := &action.Providers{Text: e.text, MediaURL: func(n string) string { return "http://media.test/" + n }}
	e.providers = p
	clock := app.Clock(func() time.Time {
		n := *e.now.Load()
		if d := e.tick.Load(); d > 0 {
			return n.Add(time.Duration(e.ticks.Add(1) * d))
		}
		return n
	})
	e.clock, e.cfg = clock, cfg
	e.actions = app.NewActions(e.store, e.dir, e.records, p, clock, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return e
}

// on makes the env's use cases work on st (a wrapper of its store), with
// the same clock, doubles and configuration.
func (e *env) on(st app.Store) {
	e.actions = app.NewActions(st, e.dir, e.records, e.providers, e.clock, e.cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func (e *env) advance(d time.Duration) {
	n := e.now.Load().Add(d)
	e.now.Store(&n)
}

func (e *env) grant(t *testing.T, ai, data int64) {
	t.Helper()
	if _, err := e.actions.AddCredits(t.Context(), e.agency, ai, data); err != nil {
		t.Fatal(err)
	}
}

func (e *env) balance(t *testing.T) app.Balance {
	t.Helper()
	b, err := e.actions.OwnCredits(t.Context(), e.agency)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (e *env) blog(keyword string) map[string]any {
	return map[string]any{"action": "generate_blog", "client_id": e.client.ID, "keyword": keyword}
}

// events returns the completion events the outbox holds, once every
// event it holds has passed its definition's strict check.
func (e *env) events() []events.RunCompletedEvent {
	var out []events.RunCompletedEvent
	for _, ev := range e.pending() {
		if err := events.Check(ev.Subject, ev.Payload); err != nil {
			panic(err)
		}
		if !events.RunCompleted.Matches(ev.Subject) {
			continue
		}
		c, err := events.RunCompleted.Parse(ev.Subject, ev.Payload)
		if err != nil || ev.ID != c.RunID {
			panic(fmt.Sprintf("event %s %s: %v", ev.ID, ev.Subject, err))
		}
		out = append(out, c)
	}
	return out
}

func wantKind(t *testing.T, err error, kind apperr.Kind, words ...string) {
	t.Helper()
	if apperr.KindOf(err) != kind {
		t.Fatalf("error = %v (kind %d), want kind %d", err, apperr.KindOf(err), kind)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not mention %q", err, w)
		}
	}
}

func TestSuccessSpendsAndFailureReleases(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{})
		e.grant(t, 10, 10)
		out, err := e.actions.Run(t.Context(), e.agency, e.blog("sourdough"), "")
		if err != nil {
			t.Fatal(err)
		}
		if out.Run.Status != app.StatusSuccess || out.Run.StatusCode != 200 || out.Balance != (app.Balance{AI: 8, Data: 10}) {
			t.Fatalf("run = %+v, balance %+v; want success and 2 AI credits spent", out.Run, out.Balance)
		}
		if out.Run.Data["post_title"] == nil || out.Run.Data["id"] == nil || out.Run.Data["status"] != "draft" {
			t.Fatalf("generate_blog data = %v, want id, post_title and a draft", out.Run.Data)
		}
		if n := e.records.count("blogs"); n != 1 {
			t.Fatalf("blogs written = %d, want 1", n)
		}
		if n := e.records.count("action_runs"); n != 1 {
			t.Fatalf("action_runs written = %d, want 1", n)
		}

		e.text.err = provider.Failure("text generator", 429, nil, "rate limited; retry later")
		out, err = e.actions.Run(t.Context(), e.agency, e.blog("rye"), "")
		if err != nil {
			t.Fatal(err)
		}
		if out.Run.Status != app.StatusError || out.Run.StatusCode != 429 || out.Balance != (app.Balance{AI: 8, Data: 10}) {
			t.Fatalf("failed run = %+v, balance %+v; want error 429, nothing spent", out.Run, out.Balance)
		}
		if msg, _ := out.Run.Data["error"].(string); !strings.Contains(msg, "rate limited") {
			t.Fatalf("failed run data = %v, want the provider's message", out.Run.Data)
		}
		if n := e.records.count("blogs"); n != 1 {
			t.Fatalf("a failed run wrote a blog: %d blogs", n)
		}
		evs := e.events()
		if len(evs) != 2 || evs[0].Status != "success" || evs[0].CreditsSpent != (events.Credits{AI: 2}) ||
			evs[1].Status != "error" || evs[1].StatusCode != 429 || evs[1].CreditsSpent != (events.Credits{}) {
			t.Fatalf("completion events = %+v", evs)
		}
	})
}

func TestTimeoutIs504AndFreeOfCharge(t *testing.T) {
	e := newEnv(t, app.Config{ActionTimeout: 50 * time.Millisecond})
	e.grant(t, 10, 0)
	e.text.release = make(chan struct{}) // never released
	start := time.Now()
	out, err := e.actions.Run(t.Context(), e.agency, e.blog("slow"), "")
	if err != nil {
		t.Fatal(err)
	}
	if out.Run.Status != app.StatusError || out.Run.StatusCode != 504 || out.Balance.AI != 10 {
		t.Fatalf("timed-out run = %+v, balance %+v; want error 504, nothing spent", out.Run, out.Balance)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the run took %s to time out after 50ms", d)
	}
}

func TestBadRequestsRunNothing(t *testing.T) {
	e := newEnv(t, app.Config{})
	e.grant(t, 10, 10)
	other := uuid.NewString()
	for _, c := range []struct {
		body  map[string]any
		kind  apperr.Kind
		words []string
	}{
		{map[string]any{}, apperr.KindInvalid, []string{"action", "client_id"}},
		{map[string]any{"client_id": e.client.ID}, apperr.KindInvalid, []string{"action is required: the name of an action, one of: seo_audit", "score_call"}},
		{map[string]any{"action": "make_coffee", "client_id": e.client.ID}, apperr.KindInvalid, []string{"action must be the name of an action, one of: seo_audit", `got "make_coffee"`}},
		{map[string]any{"action": 7.0, "client_id": e.client.ID}, apperr.KindInvalid, []string{"action must be the name of an action", "got the number 7"}},
		{map[string]any{"action": "generate_blog"}, apperr.KindInvalid, []string{"client_id is required"}},
		{map[string]any{"action": "generate_blog", "client_id": " ", "keyword": "x"}, apperr.KindInvalid, []string{"client_id is required: the id (a UUID) of a client"}},
		{map[string]any{"action": "generate_blog", "client_id": 5.0, "keyword": "x"}, apperr.KindInvalid, []string{"client_id must be the id (a UUID) of a client", "got the number 5"}},
		{map[string]any{"action": "generate_blog", "client_id": e.client.ID}, apperr.KindInvalid, []string{"generate_blog.keyword is required: a string of at most 100 characters, on one line without control characters"}},
		// Required means present, not null and not blank, as in every interface.
		{map[string]any{"action": "generate_blog", "client_id": e.client.ID, "keyword": ""}, apperr.KindInvalid, []string{"generate_blog.keyword is required"}},
		{map[string]any{"action": "generate_blog", "client_id": e.client.ID, "keyword": " \t "}, apperr.KindInvalid, []string{"generate_blog.keyword is required"}},
		{map[string]any{"action": "generate_blog", "client_id": e.client.ID, "keyword": nil}, apperr.KindInvalid, []string{"generate_blog.keyword is required"}},
		// A tab in a one-line field is refused like any control character.
		{map[string]any{"action": "generate_blog", "client_id": e.client.ID, "keyword": "sourdough\tbread"}, apperr.KindInvalid, []string{"on one line without control characters", `got "sourdough\tbread"`}},
		// Text PostgreSQL cannot hold is refused before anything is reserved.
		{map[string]any{"action": "run_llm_visibility", "client_id": e.client.ID, "prompt": "best\x00bakery?", "brand_name": "b"}, apperr.KindInvalid,
			[]string{"run_llm_visibility.prompt must be a string of at most 2,000 characters, without NUL characters (U+0000)"}},
		{map[string]any{"action": "generate_blog", "client_id": e.client.ID, "keyword": 3.0}, apperr.KindInvalid, []string{"generate_blog.keyword must be a string", "the number 3"}},
		{map[string]any{"action": "generate_blog", "client_id": e.client.ID, "keyword": "x", "tone": "angry"}, apperr.KindInvalid, []string{"generate_blog.tone must be one of: professional, friendly", `got "angry"`}},
		{map[string]any{"action": "generate_blog", "client_id": e.client.ID, "keyword": "x", "color": "red"}, apperr.KindInvalid, []string{"color is not a field of generate_blog", "keyword, category_id, tone"}},
		{map[string]any{"action": "fetch_backlinks", "client_id": e.client.ID, "url": "https://x.example"}, apperr.KindInvalid, []string{"takes no fields"}},
		{map[string]any{"action": "seo_audit", "client_id": e.client.ID, "url": "ftp://x.example/"}, apperr.KindInvalid, []string{"seo_audit.url must be an absolute http or https URL"}},
		{map[string]any{"action": "seo_audit", "client_id": e.client.ID, "url": "http://169.254.169.254/latest"}, apperr.KindInvalid, []string{"private"}},
		{map[string]any{"action": "seo_audit", "client_id": e.client.ID, "url": "http://localhost:8080/"}, apperr.KindInvalid, []string{"host localhost is a private network address"}},
		{map[string]any{"action": "run_grid_search", "client_id": e.client.ID, "keyword": "k", "lat": 91.0, "lng": 0.0}, apperr.KindInvalid, []string{"run_grid_search.lat must be a number between -85 and 85; got the number 91"}},
		{map[string]any{"action": "run_grid_search", "client_id": e.client.ID, "keyword": "k", "lat": "40.7", "lng": 0.0}, apperr.KindInvalid, []string{"run_grid_search.lat must be a number between -85 and 85", `got "40.7"`}},
		{map[string]any{"action": "generate_topical_map", "client_id": e.client.ID, "topic": "t", "depth": 2.5}, apperr.KindInvalid, []string{"generate_topical_map.depth must be an integer between 1 and 3; got the number 2.5"}},
		{map[string]any{"action": "send_prospect_email", "client_id": e.client.ID, "to": "Ana <ana@x.example>", "subject": "s", "html": "<p>h</p>"}, apperr.KindInvalid, []string{"send_prospect_email.to must be an email address such as ana@example.com"}},
		{map[string]any{"action": "send_prospect_email", "client_id": e.client.ID, "to": "zoë@client.example", "subject": "s", "html": "<p>h</p>"}, apperr.KindInvalid, []string{"ASCII, at a domain name", `got "zoë@client.example"`}},
		{map[string]any{"action": "send_prospect_email", "client_id": e.client.ID, "to": "bob@[127.0.0.1]", "subject": "s", "html": "<p>h</p>"}, apperr.KindInvalid, []string{"ASCII, at a domain name", `got "bob@[127.0.0.1]"`}},
		{map[string]any{"action": "send_prospect_email", "client_id": e.client.ID, "to": "ana@x.example", "subject": "a\r\nBcc: all@x.example", "html": "<p>h</p>"}, apperr.KindInvalid, []string{"send_prospect_email.subject must be a string of at most 200 characters, on one line without control characters"}},
		{map[string]any{"action": "run_llm_visibility", "client_id": e.client.ID, "prompt": "p", "brand_name": "b", "competitors": []any{"a", 3.0}}, apperr.KindInvalid, []string{"run_llm_visibility.competitors[1] must be a string of at most 100 characters", "got the number 3"}},
		{map[string]any{"action": "run_llm_visibility", "client_id": e.client.ID, "prompt": "p", "brand_name": "b", "competitors": []any{"a", " "}}, apperr.KindInvalid, []string{"run_llm_visibility.competitors[1] is required"}},
		{map[string]any{"action": "run_llm_visibility", "client_id": e.client.ID, "prompt": "p", "brand_name": "b", "competitors": []any{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"}}, apperr.KindInvalid,
			[]string{"run_llm_visibility.competitors must be an array of at most 10 items, each a string of at most 100 characters", "got 11 items"}},
		{map[string]any{"action": "deploy_blog", "client_id": e.client.ID, "post_id": "42"}, apperr.KindInvalid, []string{"deploy_blog.post_id must be a UUID such as", `got "42"`}},
		{map[string]any{"action": "generate_blog", "client_id": other, "keyword": "x"}, apperr.KindPermissionDenied, []string{other, "not linked"}},
		{map[string]any{"action": "generate_blog", "client_id": "not-a-uuid", "keyword": "x"}, apperr.KindPermissionDenied, []string{"not linked"}},
	} {
		_, err := e.actions.Run(t.Context(), e.agency, c.body, "")
		wantKind(t, err, c.kind, c.words...)
	}
	// The forms of a private address the probe found past the old
	// request-time check: the fetch refused them, after credits were
	// reserved. Now the check is the fetch's own rule.
	for _, host := range []string{"2130706433", "0x7f000001", "127.1", "[::127.0.0.1]", "[64:ff9b::127.0.0.1]", "198.18.0.1", "255.255.255.255", "[fec0::1]"} {
		for _, act := range []string{"seo_audit", "optimize_page"} {
			_, err := e.actions.Run(t.Context(), e.agency, map[string]any{"action": act, "client_id": e.client.ID, "url": "http://" + host + "/"}, "")
			wantKind(t, err, apperr.KindInvalid, act+".url must be an absolute http or https URL on a public address", "is a private network address")
		}
	}
	if b := e.balance(t); b != (app.Balance{AI: 10, Data: 10}) {
		t.Fatalf("balance after bad requests = %+v, want untouched", b)
	}
	if e.text.calls.Load() != 0 || len(e.events()) != 0 || e.records.calls.Load() != 0 {
		t.Fatalf("bad requests ran something: %d generations, %d events, %d writes", e.text.calls.Load(), len(e.events()), e.records.calls.Load())
	}
}

func TestInsufficientCredits(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{})
		e.grant(t, 1, 2)
		out, err := e.actions.Run(t.Context(), e.agency, e.blog("sourdough"), "")
		wantKind(t, err, apperr.KindExhausted, "insufficient AI credits", "generate_blog needs 2 AI credits", "has 1 available")
		if out.Balance != (app.Balance{AI: 1, Data: 2}) {
			t.Fatalf("balance with the refusal = %+v", out.Balance)
		}
		_, err = e.actions.Run(t.Context(), e.agency, map[string]any{"action": "run_grid_search", "client_id": e.client.ID, "keyword": "k", "lat": 1.0, "lng": 2.0}, "")
		wantKind(t, err, apperr.KindExhausted, "insufficient data credits", "needs 3 data credits", "has 2 available")
		if e.text.calls.Load() != 0 || len(e.events()) != 0 {
			t.Fatal("a refused run ran")
		}
	})
}

// Fifty calls at once against credits for twenty: exactly twenty run.
func TestConcurrentRunsNeverOverdraw(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{})
		e.grant(t, 40, 0)
		var ok, refused atomic.Int32
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				out, err := e.actions.Run(context.Background(), e.agency, e.blog(fmt.Sprint("kw ", i)), "")
				switch {
				case err == nil && out.Run.Status == app.StatusSuccess:
					ok.Add(1)
				case apperr.KindOf(err) == apperr.KindExhausted:
					refused.Add(1)
				default:
					t.Errorf("run %d: %+v, %v", i, out.Run, err)
				}
			})
		}
		wg.Wait()
		if ok.Load() != 20 || refused.Load() != 30 {
			t.Fatalf("%d succeeded, %d refused; want 20 and 30", ok.Load(), refused.Load())
		}
		if b := e.balance(t); b.AI != 0 {
			t.Fatalf("balance = %+v, want 0", b)
		}
		if n := e.records.count("blogs"); n != 20 {
			t.Fatalf("%d blogs written, want 20", n)
		}
	})
}

func TestIdempotencyKey(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{})
		e.grant(t, 10, 0)
		first, err := e.actions.Run(t.Context(), e.agency, e.blog("sourdough"), "key-1")
		if err != nil || first.Replayed {
			t.Fatalf("first: %+v, %v", first, err)
		}
		// Same key, same body, keys in another order: the first answer again.
		body := map[string]any{"keyword": "sourdough", "client_id": e.client.ID, "action": "generate_blog"}
		again, err := e.actions.Run(t.Context(), e.agency, body, "key-1")
		if err != nil || !again.Replayed || again.Run.ID != first.Run.ID || again.Run.Data["post_title"] != first.Run.Data["post_title"] {
			t.Fatalf("replay = %+v, %v; want run %s replayed", again, err, first.Run.ID)
		}
		if b := e.balance(t); b.AI != 8 || e.records.count("blogs") != 1 || e.text.calls.Load() != 1 {
			t.Fatalf("after a replay: balance %+v, %d blogs, %d generations; want one run's worth", b, e.records.count("blogs"), e.text.calls.Load())
		}
		_, err = e.actions.Run(t.Context(), e.agency, e.blog("rye"), "key-1")
		wantKind(t, err, apperr.KindInvalid, "key-1", "different request body")
		if apperr.ToStatus(err).Code().String() != "InvalidArgument" || apperr.ReasonOf(apperr.ToStatus(err)) != apperr.ReasonUnprocessable {
			t.Fatalf("reused key's status = %v, want InvalidArgument with reason %s (HTTP 422)", apperr.ToStatus(err), apperr.ReasonUnprocessable)
		}
		// Another agency's identical key is its own.
		if _, err := e.actions.Run(t.Context(), uuid.NewString(), e.blog("sourdough"), "key-1"); apperr.KindOf(err) != apperr.KindPermissionDenied {
			t.Fatalf("other agency: %v, want its own (unlinked client) answer", err)
		}

		// A duplicate while the first is still running.
		e.text.release = make(chan struct{})
		done := make(chan error, 1)
		go func() {
			_, err := e.actions.Run(context.Background(), e.agency, e.blog("spelt"), "key-2")
			done <- err
		}()
		for e.text.calls.Load() < 2 {
			time.Sleep(time.Millisecond) // why sleep: polls the text generator's call count until the first run is inside it
		}
		_, err = e.actions.Run(t.Context(), e.agency, e.blog("spelt"), "key-2")
		wantKind(t, err, apperr.KindConflict, "key-2", "still running")
		close(e.text.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// After the TTL the key is free for a new request.
		e.advance(25 * time.Hour)
		e.text.release = nil
		out, err := e.actions.Run(t.Context(), e.agency, e.blog("rye"), "key-1")
		if err != nil || out.Replayed || out.Run.ID == first.Run.ID {
			t.Fatalf("key reused after 25h: %+v, %v; want a new run", out, err)
		}
		wantKind(t, func() error { _, err := e.actions.Run(t.Context(), e.agency, e.blog("x"), "bad key"); return err }(), apperr.KindInvalid, "Idempotency-Key")
	})
}

// The crash points. A process that stops after reserving (the run
// pending) leaves credits reserved until recovery releases them; one that
// stops after committing the outcome but before writing the records
// leaves them for recovery to write. Neither spends credits on work that
// produced nothing, nor keeps records whose charge was released.
func TestRecoveryAfterACrashBeforeTheOutcome(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{ActionTimeout: time.Second, Lease: 2 * time.Second})
		e.grant(t, 10, 0)
		// A run as a process that died after the reservation leaves it.
		run := app.Run{ID: uuid.NewString(), AgencyID: e.agency, ClientID: e.client.ID, Action: "generate_blog", Status: app.StatusPending,
			Cost: action.Cost{AI: 2}, StartedAt: *e.now.Load(), LeaseUntil: e.now.Load().Add(2 * time.Second)}
		if err := e.store.InTx(t.Context(), func(tx app.Tx) error {
			if err := tx.InsertRun(t.Context(), run); err != nil {
				return err
			}
			_, _, err := tx.AddCredits(t.Context(), e.agency, app.Balance{AI: -2})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if n, _, err := e.actions.Recover(t.Context()); err != nil || n != 0 {
			t.Fatalf("recovery within the lease ended %d runs (%v); want none", n, err)
		}
		e.advance(3 * time.Second)
		n, _, err := e.actions.Recover(t.Context())
		if err != nil || n != 1 {
			t.Fatalf("recovery after the lease: %d runs, %v", n, err)
		}
		if b := e.balance(t); b.AI != 10 {
			t.Fatalf("balance after recovery = %+v, want the reservation released", b)
		}
		got, _ := e.store.Run(t.Context(), run.ID)
		if got.Status != app.StatusError || got.StatusCode != 500 || !strings.Contains(fmt.Sprint(got.Data["error"]), "interrupted") {
			t.Fatalf("recovered run = %+v", got)
		}
		if evs := e.events(); len(evs) != 1 || evs[0].RunID != run.ID || evs[0].Status != "error" {
			t.Fatalf("events = %+v, want the interrupted run's", evs)
		}
		// The error run's action_runs row is written on the next pass.
		e.advance(10 * time.Second)
		if _, w, err := e.actions.Recover(t.Context()); err != nil || w != 1 || e.records.count("action_runs") != 1 || e.records.count("blogs") != 0 {
			t.Fatalf("second pass wrote %d runs (%v); action_runs %d, blogs %d", w, err, e.records.count("action_runs"), e.records.count("blogs"))
		}
		if n, w, _ := e.actions.Recover(t.Context()); n != 0 || w != 0 {
			t.Fatalf("a third pass found work: %d, %d", n, w)
		}
	})
}

func TestRecoveryWritesRecordsOfACommittedRun(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{})
		e.grant(t, 10, 0)
		e.records.fail.Store(true) // the data service is down when the run ends
		out, err := e.actions.Run(t.Context(), e.agency, e.blog("sourdough"), "")
		if err != nil || out.Run.Status != app.StatusSuccess || out.Balance.AI != 8 {
			t.Fatalf("run = %+v, %v", out, err)
		}
		if e.records.count("blogs") != 0 {
			t.Fatal("a blog was written while the data service was down")
		}
		e.records.fail.Store(false)
		e.advance(10 * time.Second)
		if _, w, err := e.actions.Recover(t.Context()); err != nil || w != 1 {
			t.Fatalf("recovery wrote %d runs: %v", w, err)
		}
		if e.records.count("blogs") != 1 || e.records.rows["blogs"][out.Run.Data["id"].(string)] == nil {
			t.Fatalf("recovery did not write the blog %v", out.Run.Data["id"])
		}
		if b := e.balance(t); b.AI != 8 {
			t.Fatalf("balance = %+v, want the charge kept", b)
		}
	})
}

// A run that outlives its lease is ended by recovery; when its work
// finally returns, the recorded failure stands and nothing is charged or
// written.
func TestLateFinishAfterRecoveryChangesNothing(t *testing.T) {
	onEveryStore(t, func(t *testing.T, newEnv func(*testing.T, app.Config) *env) {
		e := newEnv(t, app.Config{ActionTimeout: time.Minute, Lease: 2 * time.Minute})
		e.grant(t, 10, 0)
		e.text.release = make(chan struct{})
		done := make(chan app.Outcome, 1)
		go func() {
			out, err := e.actions.Run(context.Background(), e.agency, e.blog("slow"), "")
			if err != nil {
				t.Error(err)
			}
			done <- out
		}()
		for e.text.calls.Load() < 1 {
			time.Sleep(time.Millisecond) // why sleep: polls the text generator's call count until the run is inside it
		}
		e.advance(3 * time.Minute)
		if n, _, err := e.actions.Recover(t.Context()); err != nil || n != 1 {
			t.Fatalf("recovery ended %d runs: %v", n, err)
		}
		close(e.text.release)
		out := <-done
		if out.Run.Status != app.StatusError || out.Run.StatusCode != 500 || out.Balance.AI != 10 {
			t.Fatalf("late run answered %+v, balance %+v; want the recorded interruption, nothing spent", out.Run, out.Balance)
		}
		if e.records.count("blogs") != 0 || len(e.events()) != 1 {
			t.Fatalf("late finish wrote %d blogs and %d events", e.records.count("blogs"), len(e.events()))
		}
	})
}

func TestAddCredits(t *testing.T) {
	e := newEnv(t, app.Config{})
	if _, err := e.actions.AddCredits(t.Context(), uuid.NewString(), 1, 0); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("unknown agency: %v", err)
	}
	if _, err := e.actions.AddCredits(t.Context(), e.agency, 0, 0); apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("zero amounts: %v", err)
	}
	e.grant(t, 5, 3)
	if _, err := e.actions.AddCredits(t.Context(), e.agency, -6, 0); apperr.KindOf(err) != apperr.KindConflict {
		t.Fatalf("removing more than there is: %v", err)
	}
	if _, err := e.actions.AddCredits(t.Context(), e.agency, app.MaxBalance, 0); apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("above the maximum: %v", err)
	}
	if b, err := e.actions.AddCredits(t.Context(), e.agency, -5, 2); err != nil || b != (app.Balance{AI: 0, Data: 5}) {
		t.Fatalf("remove and add = %+v, %v", b, err)
	}
}

// Under load the records of concurrent runs share data-service writes; a
// run whose records are refused does not take the others' with it.
func TestRecordsAreWrittenInBatches(t *testing.T) {
	e := newEnv(t, app.Config{})
	e.records.gate, e.records.reject = make(chan struct{}), "poison"
	e.grant(t, 1000, 0)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.actions.Background(ctx, time.Hour) }()
	var wg sync.WaitGroup
	gateOpen := false
	defer func() { // after a failed wait too: the runs end, then Background
		if !gateOpen {
			close(e.records.gate)
		}
		wg.Wait()
		stop()
		<-done
	}()
	// Runs that finish before the batch writers take jobs write their own
	// records, one run a write: on a busy machine Background may start
	// late enough that none is batched.
	waitUntil(t, func() bool { return app.RecordWritersRunning(e.actions) }, func() string { return "Background's record writers never started" })
	for i := range 24 {
		wg.Go(func() {
			kw := fmt.Sprint("bread ", i)
			if i == 7 {
				kw = "poison"
			}
			if _, err := e.actions.Run(context.Background(), e.agency, e.blog(kw), ""); err != nil {
				t.Error(err)
			}
		})
	}
	// Hold the data service until every run's records are either queued
	// for a batch or in a write waiting at the gate.
	waitUntil(t, func() bool { return int(e.records.heldBlogs.Load())+app.QueuedRecordJobs(e.actions) >= 24 }, func() string {
		return fmt.Sprintf("of the 24 runs' blogs, %d are held at the data service and %d queued for a batch", e.records.heldBlogs.Load(), app.QueuedRecordJobs(e.actions))
	})
	close(e.records.gate)
	gateOpen = true
	wg.Wait()
	stop()
	<-done
	if n := e.records.count("blogs"); n != 23 {
		t.Fatalf("%d blogs written, want the 23 that were not refused", n)
	}
	if most := e.records.mostBlogs.Load(); most < 2 {
		t.Fatalf("every data-service write carried %d blog: no batching", most)
	}
	// The 23 written are marked; recovery finds only the refused run.
	e.advance(time.Minute)
	if _, w, err := e.actions.Recover(t.Context()); err == nil || w != 0 {
		t.Fatalf("recovery: wrote %d, %v; want the refused run still refused", w, err)
	}
}

// A mark of written records that could not be written (here: a flush
// whose context ended, as the marks' tick does when the service stops) is
// kept for the next flush: recovery does not write those records again.
func TestFailedMarksAreKept(t *testing.T) {
	e := newEnv(t, app.Config{})
	e.grant(t, 10, 0)
	if _, err := e.actions.Run(t.Context(), e.agency, e.blog("rye"), ""); err != nil {
		t.Fatal(err)
	}
	if n := e.records.calls.Load(); n != 1 {
		t.Fatalf("%d data-service writes for one run, want 1", n)
	}
	stopped, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := e.actions.Recover(stopped); !errors.Is(err, context.Canceled) {
		t.Fatalf("recovery with its context canceled: %v", err)
	}
	e.advance(time.Minute)
	if _, w, err := e.actions.Recover(t.Context()); err != nil || w != 0 || e.records.calls.Load() != 1 {
		t.Fatalf("recovery wrote %d runs' records again (%d writes in all), %v; want none: they were written, their mark kept", w, e.records.calls.Load(), err)
	}
}

// waitUntil polls cond until it holds, failing the test with what says
// once 10 seconds have passed: a run that fails or hangs must not hold
// the test until the global time-out.
func waitUntil(t *testing.T, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: %s", what())
		}
		time.Sleep(time.Millisecond) // why sleep: polls the batch queue and the fake data service's gate, which have no push form
	}
}

func (r *records) ListRecords(_ context.Context, _, resource string, max int) ([]map[string]any, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for _, row := range r.rows[resource] {
		out = append(out, row)
	}
	return out[:min(max, len(out))], len(out) > max, nil
}
