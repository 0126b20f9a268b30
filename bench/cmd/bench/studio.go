package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"runtime"
	"time"
)

// studioFlags are bench studio's flags.
type studioFlags struct {
	crmFlags
	items  int
	stores []string
}

// runStudio measures Atrium Studio's two busiest pages for a signed-in
// owner, at 20,000 items, on PostgreSQL and on the memory store, against
// the JSON API's same request made with the same session (and, on
// PostgreSQL, the hand-written floor of the collections bench):
//
//   - the items list: GET /studio/a/{agency}/sites/{site}/collections/posts/
//     against GET /api/public/v1/collections/posts?limit=50 (the page's
//     size);
//   - the item editor: GET …/collections/posts/items/{id} against
//     GET /api/public/v1/collections/posts/{id}.
//
// The console's overhead is the JSON request's rate over the page's
// (pages per second), and the page's p99 over the JSON request's, each the
// median of the alternating rounds with its spread (target: at most 1.5).
func runStudio(ctx context.Context, args []string) error {
	var f studioFlags
	fs := flag.NewFlagSet("bench studio", flag.ContinueOnError)
	bindCommon(fs, &f.crmFlags)
	fs.IntVar(&f.items, "items", 20_000, "items in the posts collection (the issue's figure is at 20,000)")
	store := fs.String("store", "both", "Atrium's store: memory, postgres, or both (PostgreSQL first, then memory)")
	fs.StringVar(&f.profile, "cpuprofile", "", "write a CPU profile of Atrium during its first round of --profile-page to this file (the store appended)")
	profilePage := fs.String("profile-page", "editor", "the page --cpuprofile covers: list or editor")
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
	f.store = "postgres"
	env, err := setUp(ctx, f.crmFlags)
	if err != nil {
		return err
	}
	defer env.tearDown()
	loadCPU, serverCPU, db := env.loadCPU, env.serverCPU, env.db
	fmt.Printf("seeding a posts collection with %d items in PostgreSQL ...\n", f.items)
	site, _, item, err := seedCollections(ctx, env.atrium, db, f.items, 1000)
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

	fmt.Printf("\nmachine: %d CPUs (%s), %s; load average before: %s; commit %s\n", runtime.NumCPU(), cpuModel(), runtime.Version(), loadAverage(), commitText(ctx))
	if loadCPU != "" {
		fmt.Printf("pinning: load generator on CPU %s; Atrium, the floor and the PostgreSQL backends on CPU %s\n", loadCPU, serverCPU)
	}
	fmt.Printf("load: %d connections, %s warm-up, %d rounds of %s per server, alternating\n", f.conns, f.warmup, f.rounds, f.duration)
	fmt.Println("each request is a signed-in owner's (the session cookie); the JSON API's names the site with Atrium-Site")

	type summaryRow struct{ store, page, rps, p99, cpu string }
	var summary []summaryRow
	for _, st := range f.stores {
		atrium := env.atrium
		if st == "memory" {
			env.stopAtrium()
			f.store = "memory"
			if atrium, err = startAtrium(ctx, f.crmFlags, db, serverCPU, filepath.Join(env.tmp, "atrium-memory.log")); err != nil {
				return err
			}
			env.atrium = atrium
			fmt.Printf("\nseeding the memory store with %d items through the API ...\n", f.items)
			start := time.Now()
			if _, item, err = seedCollectionsAPI(ctx, atrium, f.items, 1000); err != nil {
				return err
			}
			var sites struct{ Sites []struct{ ID string } }
			if err := atrium.adminCall(ctx, "GET", "/admin/v1/sites?limit=1", nil, &sites); err != nil || len(sites.Sites) == 0 {
				return fmt.Errorf("finding the memory store's site (%d found): %w", len(sites.Sites), err)
			}
			site = sites.Sites[0].ID
			fmt.Printf("seeded in %s\n", time.Since(start).Round(time.Second))
			// Each item written through the API is an event the relay,
			// the audit trail and the webhooks still work through after
			// the last write: measured rounds would be charged for it.
			fmt.Printf("waiting for Atrium to work through the seeding's events ... %s\n", quiet(ctx, atrium.cmd.Process.Pid).Round(time.Second))
		}
		// The site belongs to an agency whose owner signs in.
		var a struct{ Agency struct{ ID string } }
		if err := atrium.adminCall(ctx, "POST", "/admin/v1/agencies", map[string]any{"name": "Bench agency"}, &a); err != nil {
			return err
		}
		if err := atrium.adminCall(ctx, "PATCH", "/admin/v1/sites/"+site, map[string]any{"agency_id": a.Agency.ID}, nil); err != nil {
			return err
		}
		cookie, err := signUpOwner(ctx, atrium, a.Agency.ID, "owner-"+st+"@bench.example")
		if err != nil {
			return err
		}
		fmt.Printf("\n== Atrium store: %s ==\n", st)
		studioBase := "/studio/a/" + a.Agency.ID + "/sites/" + site + "/collections/posts/"
		pages := []struct {
			name         string
			page, json   string
			floor        string
			profileRound bool
		}{
			{"items list", studioBase, "/api/public/v1/collections/posts?limit=50", "/api/public/v1/collections/posts?limit=50", *profilePage == "list"},
			{"item editor", studioBase + "items/" + item, "/api/public/v1/collections/posts/" + item, "", *profilePage == "editor"},
		}
		for _, pg := range pages {
			targets := []target{
				{name: "json", addr: atrium.api, header: "Cookie: " + cookie, headers: []string{"Atrium-Site: " + site}, pid: atrium.cmd.Process.Pid},
				{name: "studio", addr: atrium.api, header: "Cookie: " + cookie, pid: atrium.cmd.Process.Pid},
			}
			if st == "postgres" {
				targets[0].db, targets[1].db = db, db
				if pg.floor != "" {
					targets = append([]target{{name: "floor", addr: floorAddr, pid: floorProc.Process.Pid, db: db}}, targets...)
				}
			}
			path := func(t target) string {
				switch t.name {
				case "floor":
					return pg.floor
				case "json":
					return pg.json
				}
				return pg.page
			}
			for _, t := range targets {
				if _, err := load(ctx, loadCPU, t, path(t), f.conns, f.warmup); err != nil {
					return fmt.Errorf("%s, %s: %w", pg.name, t.name, err)
				}
			}
			pinBackends(ctx, f.databaseURL, db, serverCPU)
			results := map[string][]loadResult{}
			for round := range f.rounds {
				for _, t := range targets {
					var prof chan error
					if t.name == "studio" && round == 0 && pg.profileRound && f.profile != "" {
						prof = make(chan error, 1)
						file := f.profile + "-" + st
						go func() { prof <- atrium.profile(ctx, "profile", file, f.duration-time.Second) }()
					}
					r, err := load(ctx, loadCPU, t, path(t), f.conns, f.duration)
					if err != nil {
						return fmt.Errorf("%s, %s: %w", pg.name, t.name, err)
					}
					if prof != nil {
						if err := <-prof; err != nil {
							return err
						}
					}
					results[t.name] = append(results[t.name], r)
				}
			}
			fmt.Printf("\n%s: GET %s\n  against GET %s\n", pg.name, pg.page, pg.json)
			printRounds(results, "floor", "json", "studio")
			var rps, p99 []float64
			for i := range results["studio"] {
				rps = append(rps, results["json"][i].RPS/results["studio"][i].RPS)
				p99 = append(p99, results["studio"][i].P99/results["json"][i].P99)
			}
			fmt.Printf("  the console's overhead: JSON req/s / pages/s %s; page p99 / JSON p99 %s (target ≤ 1.5)\n",
				spreadOf(rps).text("%.2f"), spreadOf(p99).text("%.2f"))
			var pageP99 []float64
			for _, r := range results["studio"] {
				pageP99 = append(pageP99, r.P99)
			}
			fmt.Printf("  the page's p99: %s ms (target < 100 ms)\n", spreadOf(pageP99).text("%.1f"))
			// CPU time per request (Atrium's process and, on PostgreSQL,
			// its backends) is what the page costs the server whatever
			// else the machine runs; requests per second on a shared
			// machine measure the neighbours too.
			var cpu, jsonCPU, pageCPU []float64
			for i := range results["studio"] {
				if j, p := results["json"][i].CPU, results["studio"][i].CPU; j > 0 && p > 0 {
					cpu, jsonCPU, pageCPU = append(cpu, p/j), append(jsonCPU, j), append(pageCPU, p)
				}
			}
			cpuText := "-"
			if len(cpu) > 0 {
				cpuText = spreadOf(cpu).text("%.2f")
				fmt.Printf("  CPU per request: JSON %s µs, page %s µs; page / JSON %s\n",
					spreadOf(jsonCPU).text("%.0f"), spreadOf(pageCPU).text("%.0f"), cpuText)
			}
			summary = append(summary, summaryRow{st, pg.name, spreadOf(rps).text("%.2f"), spreadOf(p99).text("%.2f"), cpuText})
		}
	}
	fmt.Printf("\nthe console's overhead (median of the rounds, min–max; target ≤ 1.5)\n")
	fmt.Printf("  %-9s %-12s %-28s %-28s %s\n", "store", "page", "JSON req/s / pages/s", "page p99 / JSON p99", "page CPU / JSON CPU")
	for _, r := range summary {
		fmt.Printf("  %-9s %-12s %-28s %-28s %s\n", r.store, r.page, r.rps, r.p99, r.cpu)
	}
	fmt.Printf("load average after: %s\n", loadAverage())
	return nil
}

// quiet waits until process pid uses less than 2% of a core over a
// second (at most five minutes), and returns how long it waited.
func quiet(ctx context.Context, pid int) time.Duration {
	start := time.Now()
	last := cpuTime([]int{pid})
	for time.Since(start) < 5*time.Minute && ctx.Err() == nil {
		time.Sleep(time.Second)
		now := cpuTime([]int{pid})
		if now-last < 20*time.Millisecond {
			break
		}
		last = now
	}
	return time.Since(start)
}
