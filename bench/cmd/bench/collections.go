package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// collectionsFlags are bench collections' own flags.
type collectionsFlags struct {
	crmFlags
	items        int
	stores       []string
	pocketbase   string
	profileRoute string
	assetConns   int
	searchItems  int
}

// runCollections measures the collections interface against its floor and
// PocketBase: the 100-item list, one item and creates by default (the 1,000-
// item list and deep pages on request), on the memory store and on
// PostgreSQL, one after the other.
func runCollections(ctx context.Context, args []string) error {
	var f collectionsFlags
	fs := flag.NewFlagSet("bench collections", flag.ContinueOnError)
	bindCommon(fs, &f.crmFlags)
	fs.IntVar(&f.items, "items", 20_000, "items in the measured collection (the issue's table used 20,000)")
	store := fs.String("store", "both", "Atrium's store: memory, postgres, or both (PostgreSQL first, then memory, each with its own Atrium)")
	fs.StringVar(&f.pocketbase, "pocketbase", ".bin/pocketbase-peer", "the PocketBase runner (bench/peers/pocketbase, make bench-collections builds it); empty leaves PocketBase out")
	fs.StringVar(&f.profile, "cpuprofile", "", "write a CPU profile of Atrium during its first measured round of --profile-route to this file (with the store appended when both run), and print its top entries")
	fs.StringVar(&f.profileRoute, "profile-route", "get", "the route --cpuprofile covers")
	fs.StringVar(&f.routes, "routes", "list100,get,create,expand100,search,upload1m,upload10m,download1m,download10m",
		"routes to measure, of list100, list1000, list100-deep, list1000-deep, get, create, expand100, search, upload1m, upload10m, download1m, download10m")
	fs.IntVar(&f.assetConns, "asset-conns", 4, "concurrent connections of the asset routes (each carries a whole file)")
	fs.IntVar(&f.searchItems, "search-items", 100_000, "items in the collection the search route searches (the issue asks for 100,000)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch *store {
	case "both":
		f.stores = []string{"postgres", "memory"}
	case "memory", "postgres":
		f.stores = []string{*store}
	default:
		return fmt.Errorf("--store must be memory, postgres or both; got %q", *store)
	}
	var names []string
	for _, name := range strings.Split(f.routes, ",") {
		name = strings.TrimSpace(name)
		if _, ok := collectionsRoutes(0, nil)[name]; !ok && !isAssetRoute(name) {
			return fmt.Errorf("unknown route %q; the routes are list100, list1000, list100-deep, list1000-deep, get, create, expand100, search, %s", name, strings.Join(assetRoutes, ", "))
		}
		names = append(names, name)
	}

	// The floor reads PostgreSQL whichever store Atrium runs on, so the
	// PostgreSQL Atrium always starts first: its admin API defines the
	// site whose rows the floor serves.
	f.store = "postgres"
	// Atrium keeps the assets' files in a directory the bench empties
	// between upload rounds.
	assets := &assetBench{}
	var err error
	if assets.tmp, err = os.MkdirTemp("", "atrium-bench-assets-"); err != nil {
		return err
	}
	defer os.RemoveAll(assets.tmp)
	assets.atriumData, assets.floorDir = filepath.Join(assets.tmp, "atrium-data"), filepath.Join(assets.tmp, "floor")
	f.extraArgs = append(f.extraArgs, "--data-dir", assets.atriumData)
	env, err := setUp(ctx, f.crmFlags)
	if err != nil {
		return err
	}
	defer env.tearDown()
	loadCPU, serverCPU, db := env.loadCPU, env.serverCPU, env.db

	var pb *peerProc
	if f.pocketbase != "" {
		fmt.Printf("starting PocketBase with %d posts ...\n", f.items)
		start := time.Now()
		if pb, err = startPocketBase(ctx, f.pocketbase, env.tmp, serverCPU, f.items); err != nil {
			return err
		}
		defer pb.stop()
		fmt.Printf("PocketBase ready in %s\n", time.Since(start).Round(time.Second))
	}
	fmt.Printf("seeding a posts collection with %d items in PostgreSQL ...\n", f.items)
	site, key, floorItem, err := seedCollections(ctx, env.atrium, db, f.items, f.searchItems)
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
	if err := os.MkdirAll(assets.floorDir, 0o750); err != nil {
		return err
	}
	assets.files = map[int]string{}
	for _, n := range []int{1 << 20, 10 << 20} {
		if assets.files[n], err = assetFile(assets.tmp, n); err != nil {
			return err
		}
	}
	filesProc, filesAddr, err := startFilesFloor(ctx, assets.floorDir, serverCPU)
	if err != nil {
		return err
	}
	defer func() { _ = filesProc.Process.Kill(); _ = filesProc.Wait() }()
	assets.floorAddr, assets.floorPid = filesAddr, filesProc.Process.Pid

	fmt.Printf("\nmachine: %d CPUs (%s), %s\n", runtime.NumCPU(), cpuModel(), runtime.Version())
	if loadCPU != "" {
		fmt.Printf("pinning: load generator on CPU %s; Atrium, the floor, PocketBase and the PostgreSQL backends on CPU %s\n", loadCPU, serverCPU)
	}
	fmt.Printf("load: %d connections, %s warm-up, %d rounds of %s per server, alternating\n", f.conns, f.warmup, f.rounds, f.duration)
	fmt.Println("floor: net/http + pgx + encoding/json, the same SQL on the same PostgreSQL database, whichever store Atrium runs on;")
	fmt.Println("  for files, http.FileServer on the same bytes (downloads) and a streamed, hashed, fsynced write (uploads);")
	fmt.Printf("  Atrium keeps files in a local directory; asset routes use %d connections\n", f.assetConns)
	if pb != nil {
		fmt.Println("PocketBase: its defaults (SQLite in WAL mode with synchronous=NORMAL: a commit does not wait for the disk; request logs on),")
		fmt.Println("  every rule `@request.auth.id != \"\"` and a user's auth token on every request, the same records")
	}

	summary := map[string]map[string]ratios{}
	itemID := floorItem
	for _, store := range f.stores {
		atrium := env.atrium
		if store == "memory" {
			env.stopAtrium()
			f.store = "memory"
			if atrium, err = startAtrium(ctx, f.crmFlags, db, serverCPU, filepath.Join(env.tmp, "atrium-memory.log")); err != nil {
				return err
			}
			env.atrium = atrium
			env.cleanups = append(env.cleanups, env.stopAtrium)
			fmt.Printf("\nseeding the memory store with %d items through the API ...\n", f.items)
			start := time.Now()
			if key, itemID, err = seedCollectionsAPI(ctx, atrium, f.items, f.searchItems); err != nil {
				return err
			}
			fmt.Printf("seeded in %s\n", time.Since(start).Round(time.Second))
		}
		fmt.Printf("\n== Atrium store: %s ==\n", store)
		items := map[string]string{"floor": floorItem, "atrium": itemID}
		if pb != nil {
			items["pocketbase"] = pb.item
		}
		all := collectionsRoutes(f.items, items)
		summary[store] = map[string]ratios{}
		downloadsReady := false
		for _, name := range names {
			rt := all[name]
			conns := f.conns
			targets := []target{{name: "floor", addr: floorAddr, pid: floorProc.Process.Pid, db: db},
				{name: "atrium", addr: atrium.api, auth: "Bearer " + key, pid: atrium.cmd.Process.Pid}}
			if store == "postgres" {
				targets[1].db = db
			}
			if _, peer := rt["pocketbase"]; pb != nil && peer && !isAssetRoute(name) {
				targets = append(targets, target{name: "pocketbase", addr: pb.addr, auth: pb.token, pid: pb.cmd.Process.Pid})
			}
			upload := strings.HasPrefix(name, "upload")
			if isAssetRoute(name) {
				if !upload && store != f.stores[0] {
					fmt.Printf("\n%s: measured once, on the %s store: a download reads no store\n", name, f.stores[0])
					continue
				}
				if !upload && !downloadsReady {
					if err := assets.prepareDownloads(ctx, atrium, key); err != nil {
						return err
					}
					downloadsReady = true
				}
				rt, conns = assets.assetRoute(name), f.assetConns
				targets[0] = target{name: "floor", addr: assets.floorAddr, pid: assets.floorPid}
				if !upload {
					targets[1].auth, targets[1].db = "", "" // files are served without a key, from no store
				}
			}
			routeOf := func(t target) route { return rt[t.name] }
			afterLoad := func() error {
				if upload {
					return assets.cleanUploads()
				}
				return nil
			}
			for _, t := range targets {
				if _, err := loadRoute(ctx, loadCPU, t, routeOf(t), conns, f.warmup); err != nil {
					return err
				}
				if err := afterLoad(); err != nil {
					return err
				}
			}
			pinBackends(ctx, f.databaseURL, db, serverCPU)
			results := map[string][]loadResult{}
			for round := range f.rounds {
				for _, t := range targets {
					var prof chan error
					if t.name == "atrium" && round == 0 && name == f.profileRoute && f.profile != "" {
						prof = make(chan error, 1)
						go func() { prof <- atrium.profile(ctx, "profile", profileFile(f, store), f.duration-time.Second) }()
					}
					r, err := loadRoute(ctx, loadCPU, t, routeOf(t), conns, f.duration)
					if err != nil {
						return err
					}
					if err := afterLoad(); err != nil {
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
			summary[store][name] = report(rt["atrium"].String(), results)
			if isAssetRoute(name) {
				megabytesPerSecond(name, results)
			}
			if name == "create" {
				if err := resetCreated(ctx, db, pb); err != nil {
					return err
				}
			}
		}
	}

	fmt.Printf("\nAtrium's ratios (requests per second: median of the per-round ratios; CPU: the other's CPU time per request\n")
	fmt.Printf("over Atrium's, server and database backends; above 1, Atrium is faster)\n")
	fmt.Printf("  %-9s %-14s %15s %20s\n", "store", "route", "to floor", "to PocketBase")
	for _, store := range f.stores {
		for _, name := range names {
			r := summary[store][name]
			cell := func(x ratio, ok bool) string {
				if !ok {
					return "-"
				}
				if x.cpu == 0 {
					return fmt.Sprintf("%.2f", x.rps)
				}
				return fmt.Sprintf("%.2f (CPU %.2f)", x.rps, x.cpu)
			}
			fl, okF := r["floor"]
			pb, okP := r["pocketbase"]
			fmt.Printf("  %-9s %-14s %15s %20s\n", store, name, cell(fl, okF), cell(pb, okP))
		}
	}
	if f.profile != "" {
		for _, store := range f.stores {
			file := profileFile(f, store)
			if _, err := os.Stat(file); err != nil {
				continue
			}
			fmt.Printf("\nCPU profile of Atrium on %s (first round of %s): %s\n", store, f.profileRoute, file)
			out, _ := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=30", file).CombinedOutput()
			fmt.Println(string(out))
		}
	}
	return nil
}

// profileFile is where the CPU profile of store goes: --cpuprofile, with
// the store before the extension when both stores run.
func profileFile(f collectionsFlags, store string) string {
	if len(f.stores) < 2 {
		return f.profile
	}
	ext := filepath.Ext(f.profile)
	return strings.TrimSuffix(f.profile, ext) + "-" + store + ext
}

// createdTitle is the title of every item the create route writes, by
// which resetCreated finds them.
const createdTitle = "Benchmark post"

// collectionsRoutes are the measured routes for a collection of n items,
// each as every server spells it (floor, atrium, pocketbase); items are
// the ids of the item each reads. The deep pages start 10,000 items before
// the end.
func collectionsRoutes(n int, items map[string]string) map[string]map[string]route {
	base := "/api/public/v1/collections/posts"
	pbBase := "/api/collections/posts/records"
	deep := max(0, n-10_000)
	list := func(limit, offset int) map[string]route {
		a := fmt.Sprintf("%s?limit=%d", base, limit)
		if offset > 0 {
			a += fmt.Sprintf("&offset=%d", offset)
		}
		// PocketBase pages by number; its list counts the total too
		// (totalItems, totalPages), which is its default.
		return map[string]route{
			"floor": {method: "GET", path: a}, "atrium": {method: "GET", path: a},
			"pocketbase": {method: "GET", path: fmt.Sprintf("%s?perPage=%d&page=%d&sort=-created", pbBase, limit, offset/limit+1)},
		}
	}
	body := `{"title":"` + createdTitle + `","body":"<p>Short body.</p>","category":"news","rating":4.5,"views":1}`
	create := route{method: "POST", path: base, body: `{"data":` + body + `,"is_published":true}`}
	// A page of articles with its author and topic expanded (the floor
	// joins by hand, one query per referenced collection), and a search
	// of the library for a word about 0.1% of its items hold.
	expand := route{method: "GET", path: "/api/public/v1/collections/articles?limit=100&expand=author,topic"}
	search := route{method: "GET", path: "/api/public/v1/collections/library?q=" + searchWord + "&limit=20"}
	return map[string]map[string]route{
		"expand100":     {"floor": expand, "atrium": expand},
		"search":        {"floor": search, "atrium": search},
		"list100":       list(100, 0),
		"list1000":      list(1000, 0),
		"list100-deep":  list(100, deep),
		"list1000-deep": list(1000, deep),
		"get": {
			"floor":      {method: "GET", path: base + "/" + items["floor"]},
			"atrium":     {method: "GET", path: base + "/" + items["atrium"]},
			"pocketbase": {method: "GET", path: pbBase + "/" + items["pocketbase"]},
		},
		"create": {
			"floor": create, "atrium": create,
			"pocketbase": {method: "POST", path: pbBase, body: strings.TrimSuffix(body, "}") + `,"is_published":true}`},
		},
	}
}

// resetCreated deletes what the create route wrote, in PostgreSQL (the
// floor's and Atrium's rows) and in PocketBase, so that every server's
// lists read the seeded items in the next store's run, and vacuums.
func resetCreated(ctx context.Context, db string, pb *peerProc) error {
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DELETE FROM collections.items WHERE data->>'title' = $1`, createdTitle); err != nil {
		return fmt.Errorf("delete created items: %w", err)
	}
	if pb != nil {
		if err := call(ctx, "http://"+pb.addr+"/_bench/reset", pb.token, "POST", nil, nil); err != nil {
			return fmt.Errorf("PocketBase: %w", err)
		}
	}
	return settle(ctx, db)
}

// searchWord is the word the search route looks for: w0042, which one
// library item in searchSpread holds.
const (
	searchWord   = "w0042"
	searchSpread = 1000
)

// The expand route's collections: articles referring to authors and
// topics.
const (
	benchArticles = 1000
	benchAuthors  = 100
	benchTopics   = 20
)

// defineCollections creates a site, its posts collection (title, body,
// category, rating, views), a neighbour collection, the collections of
// the expand route (authors, topics, articles) and of the search route
// (library), and a read-write key of the site, through the admin API.
func defineCollections(ctx context.Context, p *atriumProc) (site, key string, err error) {
	var s struct{ Site struct{ ID string } }
	if err := p.adminCall(ctx, "POST", "/admin/v1/sites", map[string]any{"name": "Bench site"}, &s); err != nil {
		return "", "", err
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
		return "", "", err
	}
	// A neighbour collection, so that the queries are really scoped.
	for _, c := range []map[string]any{
		{"name": "Other", "slug": "other", "fields": []map[string]any{{"key": "title", "type": "text"}}},
		{"name": "Authors", "slug": "authors", "fields": []map[string]any{{"key": "name", "type": "text", "required": true}, {"key": "bio", "type": "text"}}},
		{"name": "Topics", "slug": "topics", "fields": []map[string]any{{"key": "name", "type": "text", "required": true}}},
		{"name": "Articles", "slug": "articles", "fields": []map[string]any{{"key": "title", "type": "text", "required": true},
			{"key": "author", "type": "reference", "target": "authors"}, {"key": "topic", "type": "reference", "target": "topics"}}},
		{"name": "Library", "slug": "library", "fields": []map[string]any{{"key": "title", "type": "text", "required": true}, {"key": "body", "type": "rich_text"}}},
	} {
		if err := p.adminCall(ctx, "POST", "/admin/v1/sites/"+s.Site.ID+"/collections", c, nil); err != nil {
			return "", "", err
		}
	}
	var k struct{ Key struct{ Secret string } }
	if err := p.adminCall(ctx, "POST", "/admin/v1/keys", map[string]any{"name": "bench", "scopes": []string{"read", "write"}, "site_id": s.Site.ID}, &k); err != nil {
		return "", "", err
	}
	return s.Site.ID, k.Key.Secret, nil
}

// seedCollections defines the collections (defineCollections), then writes
// n items straight into the table (the rows are what the API would write;
// through the API PostgreSQL would take minutes), and returns the site,
// the key and the id of the item in the middle of the newest-first order.
func seedCollections(ctx context.Context, p *atriumProc, db string, n, searchItems int) (site, key, item string, err error) {
	site, key, err = defineCollections(ctx, p)
	if err != nil {
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
			WHERE c.site_id = $1 AND c.slug = $3`, site, c.n, c.slug)
		if err != nil {
			return "", "", "", fmt.Errorf("seed items: %w", err)
		}
	}
	// The expand route's rows, then the library: each item's words are
	// w<i mod searchSpread> and common words in markup.
	for _, seed := range []struct{ slug, data string }{
		{"authors", `jsonb_build_object('name', 'Author ' || i, 'bio', 'Writes about bread.')`},
		{"topics", `jsonb_build_object('name', 'Topic ' || i)`},
		{"library", fmt.Sprintf(`jsonb_build_object('title', 'Book ' || i || ' on w' || lpad((i %% %d)::text, 4, '0'),
			'body', '<p>Flour, <b>water</b> and salt: the ' || (ARRAY['rye', 'wheat', 'spelt'])[1 + i %% 3] || ' loaf.</p>')`, searchSpread)},
	} {
		count := map[string]int{"authors": benchAuthors, "topics": benchTopics, "library": searchItems}[seed.slug]
		if _, err = conn.Exec(ctx, `INSERT INTO collections.items (id, collection_id, data, is_published, version, created_at, updated_at)
			SELECT gen_random_uuid(), c.id, `+seed.data+`, true, 1, now() - make_interval(secs => i), now() - make_interval(secs => i)
			FROM collections.collections c, generate_series(1, $2::int) AS i
			WHERE c.site_id = $1 AND c.slug = $3`, site, count, seed.slug); err != nil {
			return "", "", "", fmt.Errorf("seed %s: %w", seed.slug, err)
		}
	}
	if _, err = conn.Exec(ctx, `INSERT INTO collections.items (id, collection_id, data, is_published, version, created_at, updated_at)
		SELECT gen_random_uuid(), c.id, jsonb_build_object('title', 'Article ' || i,
				'author', (SELECT id::text FROM collections.items WHERE collection_id = a.id ORDER BY created_at OFFSET (i * 7) % $3 LIMIT 1),
				'topic', (SELECT id::text FROM collections.items WHERE collection_id = t.id ORDER BY created_at OFFSET i % $4 LIMIT 1)),
			true, 1, now() - make_interval(secs => i), now() - make_interval(secs => i)
		FROM collections.collections c, collections.collections a, collections.collections t, generate_series(1, $2::int) AS i
		WHERE c.site_id = $1 AND c.slug = 'articles' AND a.site_id = $1 AND a.slug = 'authors' AND t.site_id = $1 AND t.slug = 'topics'`,
		site, benchArticles, benchAuthors, benchTopics); err != nil {
		return "", "", "", fmt.Errorf("seed articles: %w", err)
	}
	err = conn.QueryRow(ctx, `SELECT i.id::text FROM collections.items i JOIN collections.collections c ON c.id = i.collection_id
		WHERE c.site_id = $1 AND c.slug = 'posts' ORDER BY i.created_at DESC LIMIT 1 OFFSET $2`, site, n/2).Scan(&item)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", "", errors.New("seeding wrote no items")
	}
	return site, key, item, err
}

// seedCollectionsAPI defines the collections (defineCollections) on an
// Atrium with the memory store, where there is no table to write into,
// and creates the n posts (and n/5 neighbours) with the same values as
// seedCollections through the public API, 16 at a time. It returns the key
// and the id of the item in the middle.
func seedCollectionsAPI(ctx context.Context, p *atriumProc, n, searchItems int) (key, item string, err error) {
	_, key, err = defineCollections(ctx, p)
	if err != nil {
		return "", "", err
	}
	categories := []string{"news", "recipes", "events"}
	body := strings.Repeat("<p>Lorem ipsum dolor sit amet.</p>", 4)
	type job struct {
		slug string
		i    int
	}
	jobs := make(chan job)
	ids := make([]string, n)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range 16 {
		wg.Go(func() {
			for j := range jobs {
				data := map[string]any{"title": fmt.Sprintf("Other %d", j.i)}
				if j.slug == "posts" {
					data = map[string]any{"title": fmt.Sprintf("Post %d about bread & cake", j.i), "body": body,
						"category": categories[j.i%3], "rating": float64(j.i%50) / 10, "views": j.i}
				}
				var out struct{ Item struct{ ID string } }
				err := p.apiCall(ctx, key, "POST", "/api/public/v1/collections/"+j.slug, map[string]any{"data": data, "is_published": j.i%4 != 0}, &out)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if j.slug == "posts" {
					ids[j.i] = out.Item.ID
				}
				mu.Unlock()
			}
		})
	}
	for i := range n {
		jobs <- job{"posts", i}
		if i%5 == 0 {
			jobs <- job{"other", i}
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return "", "", firstErr
	}
	if n == 0 {
		return "", "", errors.New("seeding wrote no items")
	}
	authors, err := createMany(ctx, p, key, "authors", benchAuthors, func(i int) map[string]any {
		return map[string]any{"name": fmt.Sprint("Author ", i), "bio": "Writes about bread."}
	})
	if err != nil {
		return "", "", err
	}
	topics, err := createMany(ctx, p, key, "topics", benchTopics, func(i int) map[string]any { return map[string]any{"name": fmt.Sprint("Topic ", i)} })
	if err != nil {
		return "", "", err
	}
	if _, err := createMany(ctx, p, key, "articles", benchArticles, func(i int) map[string]any {
		return map[string]any{"title": fmt.Sprint("Article ", i), "author": authors[(i*7)%benchAuthors], "topic": topics[i%benchTopics]}
	}); err != nil {
		return "", "", err
	}
	loaves := []string{"rye", "wheat", "spelt"}
	if _, err := createMany(ctx, p, key, "library", searchItems, func(i int) map[string]any {
		return map[string]any{"title": fmt.Sprintf("Book %d on w%04d", i, i%searchSpread),
			"body": "<p>Flour, <b>water</b> and salt: the " + loaves[i%3] + " loaf.</p>"}
	}); err != nil {
		return "", "", err
	}
	return key, ids[n/2], nil
}

// createMany creates n published items of slug through the public API, 16
// at a time, with the data of each index, and returns their ids by index.
func createMany(ctx context.Context, p *atriumProc, key, slug string, n int, data func(int) map[string]any) ([]string, error) {
	ids := make([]string, n)
	jobs := make(chan int)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range 16 {
		wg.Go(func() {
			for i := range jobs {
				var out struct{ Item struct{ ID string } }
				err := p.apiCall(ctx, key, "POST", "/api/public/v1/collections/"+slug, map[string]any{"data": data(i), "is_published": true}, &out)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				ids[i] = out.Item.ID
				mu.Unlock()
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return ids, firstErr
}

func startCollectionsFloor(ctx context.Context, db, site, cpu string) (*exec.Cmd, string, error) {
	return startFloorWith(ctx, cpu, "--database-url", db, "--site", site)
}

// peerProc is a running PocketBase runner (bench/peers/pocketbase).
type peerProc struct {
	cmd               *exec.Cmd
	addr, token, item string
}

// startPocketBase starts the runner on cpu with n posts in a data
// directory under tmp, and waits for it to say it serves.
func startPocketBase(ctx context.Context, bin, tmp, cpu string, n int) (*peerProc, error) {
	argv := pinned(cpu, bin, "--dir", filepath.Join(tmp, "pocketbase"), "--addr", "127.0.0.1:0", "--items", fmt.Sprint(n))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s (make bench-collections builds it): %w", bin, err)
	}
	var ready struct{ Addr, Token, Item string }
	if err := json.NewDecoder(out).Decode(&ready); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("PocketBase runner did not start: %w", err)
	}
	return &peerProc{cmd: cmd, addr: ready.Addr, token: ready.Token, item: ready.Item}, nil
}

func (p *peerProc) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}
