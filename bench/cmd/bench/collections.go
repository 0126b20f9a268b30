package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// runCollections measures the collections interface against its floor:
// item lists of 100 and 1,000 at offset 0 and 90,000 of a 100,000-item
// collection, one item, and creates, on PostgreSQL.
func runCollections(ctx context.Context, args []string) error {
	var f crmFlags
	var items int
	fs := flag.NewFlagSet("bench collections", flag.ContinueOnError)
	bindCommon(fs, &f)
	fs.IntVar(&items, "items", 100_000, "items in the measured collection")
	fs.StringVar(&f.profile, "cpuprofile", "", "write a CPU profile of Atrium during its first measured round of the 100-item list, and print its top entries")
	fs.StringVar(&f.routes, "routes", "list100,list1000,list100-deep,list1000-deep,get,create", "routes to measure")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f.store = "postgres"
	env, err := setUp(ctx, f)
	if err != nil {
		return err
	}
	defer env.tearDown()
	loadCPU, serverCPU, db, atrium := env.loadCPU, env.serverCPU, env.db, env.atrium

	fmt.Printf("seeding a posts collection with %d items ...\n", items)
	site, key, itemID, err := seedCollections(ctx, atrium, db, items)
	if err != nil {
		return err
	}
	if err := settle(ctx, db); err != nil {
		return err
	}
	floorProc, floorAddr, err := startCollectionsFloor(ctx, db, site, serverCPU)
	if err != nil {
		return err
	}
	defer func() { _ = floorProc.Process.Kill(); _ = floorProc.Wait() }()

	fmt.Printf("\nmachine: %d CPUs (%s), %s\n", runtime.NumCPU(), cpuModel(), runtime.Version())
	if loadCPU != "" {
		fmt.Printf("pinning: load generator on CPU %s; Atrium, the floor and their PostgreSQL backends on CPU %s\n", loadCPU, serverCPU)
	}
	fmt.Printf("load: %d connections, %s warm-up, %d rounds of %s per server, alternating\n", f.conns, f.warmup, f.rounds, f.duration)
	fmt.Println("Atrium store: postgres; floor: net/http + pgx + encoding/json, the same SQL on the same database")

	base := "/api/public/v1/collections/posts"
	deep := max(0, items-10_000)
	all := map[string]route{
		"list100":       {method: "GET", path: base + "?limit=100"},
		"list1000":      {method: "GET", path: base + "?limit=1000"},
		"list100-deep":  {method: "GET", path: fmt.Sprintf("%s?limit=100&offset=%d", base, deep)},
		"list1000-deep": {method: "GET", path: fmt.Sprintf("%s?limit=1000&offset=%d", base, deep)},
		"get":           {method: "GET", path: base + "/" + itemID},
		"create":        {method: "POST", path: base, body: `{"data":{"title":"Benchmark post","body":"<p>Short body.</p>","category":"news","rating":4.5,"views":1},"is_published":true}`},
	}
	for _, name := range strings.Split(f.routes, ",") {
		rt, ok := all[strings.TrimSpace(name)]
		if !ok {
			return fmt.Errorf("unknown route %q", name)
		}
		targets := []target{{name: "floor", addr: floorAddr}, {name: "atrium", addr: atrium.api, auth: "Bearer " + key}}
		for _, t := range targets {
			if _, err := loadRoute(ctx, loadCPU, t, rt, f.conns, f.warmup); err != nil {
				return err
			}
		}
		pinBackends(ctx, f.databaseURL, db, serverCPU)
		results := map[string][]loadResult{}
		for round := range f.rounds {
			for _, t := range targets {
				var prof chan error
				if t.name == "atrium" && round == 0 && name == "list100" && f.profile != "" {
					prof = make(chan error, 1)
					go func() { prof <- atrium.profile(ctx, "profile", f.profile, f.duration-time.Second) }()
				}
				r, err := loadRoute(ctx, loadCPU, t, rt, f.conns, f.duration)
				if err != nil {
					return err
				}
				if prof != nil {
					if err := <-prof; err != nil {
						return err
					}
				}
				results[t.name] = append(results[t.name], r)
			}
		}
		report(rt.String(), results)
	}
	if f.profile != "" {
		fmt.Printf("\nCPU profile of Atrium (first round of the 100-item list): %s\n", f.profile)
		out, _ := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=30", f.profile).CombinedOutput() //nolint:gosec // G204: the bench runs the binaries and tools it is pointed at, by design
		fmt.Println(string(out))
	}
	return nil
}

// seedCollections creates a site, a posts collection and a read-write key
// through the admin API, then n items straight into the table (through the
// API it would take minutes; the rows are what the API would write), and
// returns the site, the key and one item id.
func seedCollections(ctx context.Context, p *atriumProc, db string, n int) (site, key, item string, err error) {
	var s struct{ Site struct{ ID string } }
	if err := p.adminCall(ctx, "POST", "/admin/v1/sites", map[string]any{"name": "Bench site"}, &s); err != nil {
		return "", "", "", err
	}
	if err := p.adminCall(ctx, "POST", "/admin/v1/sites/"+s.Site.ID+"/collections", map[string]any{
		"name": "Posts", "slug": "posts", "fields": []map[string]any{
			{"key": "title", "type": "text", "required": true},
			{"key": "body", "type": "rich_text"},
			{"key": "category", "type": "select", "options": []string{"news", "recipes", "events"}},
			{"key": "rating", "type": "number"},
			{"key": "views", "type": "integer"},
		},
	}, nil); err != nil {
		return "", "", "", err
	}
	// A neighbour collection, so that the queries are really scoped.
	if err := p.adminCall(ctx, "POST", "/admin/v1/sites/"+s.Site.ID+"/collections", map[string]any{
		"name": "Other", "slug": "other", "fields": []map[string]any{{"key": "title", "type": "text"}},
	}, nil); err != nil {
		return "", "", "", err
	}
	var k struct{ Key struct{ Secret string } }
	if err := p.adminCall(ctx, "POST", "/admin/v1/keys", map[string]any{"name": "bench", "scopes": []string{"read", "write"}, "site_id": s.Site.ID}, &k); err != nil {
		return "", "", "", err
	}
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		return "", "", "", err
	}
	defer conn.Close(ctx)
	for _, c := range []struct {
		slug string
		n    int
	}{{"posts", n}, {"other", n / 5}} {
		_, err = conn.Exec(ctx, `INSERT INTO collections.items (id, collection_id, data, is_published, version, created_at, updated_at)
			SELECT gen_random_uuid(), c.id,
				jsonb_build_object('title', 'Post ' || i || ' about bread & cake', 'body', repeat('<p>Lorem ipsum dolor sit amet.</p>', 4),
					'category', (ARRAY['news', 'recipes', 'events'])[1 + i % 3], 'rating', (i % 50) / 10.0, 'views', i),
				i % 4 <> 0, 1, now() - make_interval(secs => i), now() - make_interval(secs => i)
			FROM collections.collections c, generate_series(1, $2::int) AS i
			WHERE c.site_id = $1 AND c.slug = $3`, s.Site.ID, c.n, c.slug)
		if err != nil {
			return "", "", "", fmt.Errorf("seed items: %w", err)
		}
	}
	err = conn.QueryRow(ctx, `SELECT i.id::text FROM collections.items i JOIN collections.collections c ON c.id = i.collection_id
		WHERE c.site_id = $1 AND c.slug = 'posts' ORDER BY i.created_at DESC LIMIT 1 OFFSET $2`, s.Site.ID, n/2).Scan(&item)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", "", errors.New("seeding wrote no items")
	}
	return s.Site.ID, k.Key.Secret, item, err
}

func startCollectionsFloor(ctx context.Context, db, site, cpu string) (*exec.Cmd, string, error) {
	return startFloorWith(ctx, cpu, "--database-url", db, "--site", site)
}
