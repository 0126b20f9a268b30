package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"time"

	"github.com/jackc/pgx/v5"
)

// runData measures the data read against its floor on 1,000,000 keyword
// rows over 100 clients: the large client's status=active rows by
// tracked_at, limit 100, at offset 0 and 50,000, and the cursor path at
// the same depth.
func runData(ctx context.Context, args []string) error {
	var f crmFlags
	var rows, clients int
	fs := flag.NewFlagSet("bench data", flag.ContinueOnError)
	bindCommon(fs, &f)
	fs.IntVar(&rows, "rows", 1_000_000, "keyword rows in all")
	fs.IntVar(&clients, "clients", 100, "clients; the first has a tenth of the rows")
	var depth int
	fs.IntVar(&depth, "depth", 50_000, "the deep offset, and the cursor's position, in the large client's active rows")
	fs.StringVar(&f.profile, "cpuprofile", "", "write a CPU profile of Atrium during its first measured round of each read to this file with the read's name appended (offset-0, offset-deep, cursor), and print their top entries")
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

	big := rows / 10
	fmt.Printf("seeding %d keyword rows over %d clients (%d for the large one) ...\n", rows, clients, big)
	start := time.Now()
	bigClient, key, err := seedData(ctx, atrium, db, rows, clients, big)
	if err != nil {
		return err
	}
	fmt.Printf("seeded in %s\n", time.Since(start).Round(time.Second))
	if err := settle(ctx, db); err != nil {
		return err
	}
	floorProc, floorAddr, err := startFloorWith(ctx, serverCPU, "--database-url", db, "--data")
	if err != nil {
		return err
	}
	defer func() { _ = floorProc.Process.Kill(); _ = floorProc.Wait() }()

	base := "/api/v1/data?resource=keywords&client_id=" + bigClient + "&filter_field=status&filter_value=active&order=tracked_at&limit=100"
	// The cursor after row depth, from Atrium's own page before it; the
	// floor gets the same position as plain parameters.
	cursor, afterAt, afterID, err := cursorAt(ctx, atrium, key, base, depth)
	if err != nil {
		return err
	}
	fmt.Printf("\nmachine: %d CPUs (%s), %s\n", runtime.NumCPU(), cpuModel(), runtime.Version())
	if loadCPU != "" {
		fmt.Printf("pinning: load generator on CPU %s; Atrium, the floor and their PostgreSQL backends on CPU %s\n", loadCPU, serverCPU)
	}
	fmt.Printf("load: %d connections, %s warm-up, %d rounds of %s per server, alternating\n", f.conns, f.warmup, f.rounds, f.duration)

	var profiles []string
	for _, c := range []struct {
		label, file string
		atrium, flr string
	}{
		{"offset 0", "offset-0", base, base},
		{fmt.Sprintf("offset %d", depth), "offset-deep", fmt.Sprintf("%s&offset=%d", base, depth), fmt.Sprintf("%s&offset=%d", base, depth)},
		{fmt.Sprintf("cursor at %d", depth), "cursor", base + "&cursor=" + url.QueryEscape(cursor),
			base + "&after_tracked_at=" + url.QueryEscape(afterAt) + "&after_id=" + afterID},
	} {
		targets := map[string]target{"floor": {name: "floor", addr: floorAddr, pid: floorProc.Process.Pid, db: db},
			"atrium": {name: "atrium", addr: atrium.api, auth: "Bearer " + key, pid: atrium.cmd.Process.Pid, db: db}}
		paths := map[string]string{"floor": c.flr, "atrium": c.atrium}
		for _, name := range []string{"floor", "atrium"} {
			if _, err := loadRoute(ctx, loadCPU, targets[name], route{method: "GET", path: paths[name]}, f.conns, f.warmup); err != nil {
				return err
			}
		}
		pinBackends(ctx, f.databaseURL, db, serverCPU)
		results := map[string][]loadResult{}
		for round := range f.rounds {
			for _, name := range []string{"floor", "atrium"} {
				var prof chan error
				if name == "atrium" && round == 0 && f.profile != "" {
					file := f.profile + "-" + c.file
					profiles = append(profiles, file)
					prof = make(chan error, 1)
					go func() { prof <- atrium.profile(ctx, "profile", file, f.duration-time.Second) }()
				}
				r, err := loadRoute(ctx, loadCPU, targets[name], route{method: "GET", path: paths[name]}, f.conns, f.duration)
				if err != nil {
					return err
				}
				if prof != nil {
					if err := <-prof; err != nil {
						return err
					}
				}
				results[name] = append(results[name], r)
			}
		}
		report("GET keywords, status=active by tracked_at, limit 100, "+c.label, results)
	}
	for _, file := range profiles {
		fmt.Printf("\nCPU profile of Atrium (first round): %s\n", file)
		out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=30", file).CombinedOutput()
		if err != nil {
			fmt.Printf("go tool pprof: %v\n", err)
		}
		fmt.Println(string(out))
	}
	return nil
}

// seedData creates an agency, its clients (linked) and a read key through
// the admin API, then the keyword rows straight into the table, as the
// data service writes them (80% status active).
func seedData(ctx context.Context, p *atriumProc, db string, rows, clients, big int) (string, string, error) {
	var a struct{ Agency struct{ ID string } }
	if err := p.adminCall(ctx, "POST", "/admin/v1/agencies", map[string]any{"name": "Bench agency"}, &a); err != nil {
		return "", "", err
	}
	var ids []string
	for i := range clients {
		var c struct{ Client struct{ ID string } }
		if err := p.adminCall(ctx, "POST", "/admin/v1/clients", map[string]any{"name": fmt.Sprint("Client ", i), "domain": fmt.Sprintf("c%d.example", i)}, &c); err != nil {
			return "", "", err
		}
		if err := p.adminCall(ctx, "PUT", "/admin/v1/agencies/"+a.Agency.ID+"/clients/"+c.Client.ID, nil, nil); err != nil {
			return "", "", err
		}
		ids = append(ids, c.Client.ID)
	}
	var k struct{ Key struct{ Secret string } }
	if err := p.adminCall(ctx, "POST", "/admin/v1/keys", map[string]any{"name": "bench", "scopes": []string{"read"}, "agency_id": a.Agency.ID}, &k); err != nil {
		return "", "", err
	}
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		return "", "", err
	}
	defer conn.Close(ctx)
	per := (rows - big) / max(1, clients-1)
	for i, id := range ids {
		n := per
		if i == 0 {
			n = big
		}
		_, err := conn.Exec(ctx, `INSERT INTO data.rows (id, client_id, resource, created_at, updated_at, tracked_at, status, data)
			SELECT r.id, $1, 'keywords', date_trunc('day', r.tracked), r.tracked, r.tracked, r.status,
				jsonb_build_object('id', r.id, 'keyword', 'keyword ' || i, 'position', i % 100, 'url', 'https://bakery.example/p/' || i,
					'search_volume', (i * 7) % 10000, 'difficulty', (i % 1000) / 10.0, 'status', r.status,
					'tracked_at', to_char(r.tracked AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
					'created_at', to_char(r.tracked AT TIME ZONE 'UTC', 'YYYY-MM-DD'),
					'updated_at', to_char(r.tracked AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
			FROM generate_series(1, $2::int) AS i,
				LATERAL (SELECT gen_random_uuid() AS id, timestamptz '2026-01-01' + make_interval(mins => i / 3) AS tracked,
					CASE WHEN i % 5 = 0 THEN 'paused' ELSE 'active' END AS status) r`, id, n)
		if err != nil {
			return "", "", fmt.Errorf("seed rows: %w", err)
		}
	}
	// The counters the data service keeps with the rows it writes.
	if _, err := conn.Exec(ctx, `INSERT INTO data.row_counts (client_id, resource, field, value, count)
		SELECT client_id, resource, '', '', count(*) FROM data.rows GROUP BY client_id, resource
		UNION ALL
		SELECT client_id, resource, 'status', status, count(*) FROM data.rows WHERE status IS NOT NULL GROUP BY client_id, resource, status`); err != nil {
		return "", "", fmt.Errorf("seed counts: %w", err)
	}
	return ids[0], k.Key.Secret, nil
}

// cursorAt reads the page ending at row depth through Atrium and returns
// its next_cursor, and the same position (tracked_at, id) for the floor.
func cursorAt(ctx context.Context, p *atriumProc, key, base string, depth int) (string, string, string, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://%s%s&offset=%d", p.api, base, depth-100), nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", "", "", err
	}
	defer resp.Body.Close()
	var page struct {
		Data []struct {
			ID        string `json:"id"`
			TrackedAt string `json:"tracked_at"`
		} `json:"data"`
		Pagination struct {
			NextCursor string `json:"next_cursor"`
		} `json:"pagination"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return "", "", "", fmt.Errorf("page at %d: %w (status %s)", depth, err, resp.Status)
	}
	if len(page.Data) == 0 || page.Pagination.NextCursor == "" {
		return "", "", "", fmt.Errorf("page at %d: no rows or no next cursor (status %s)", depth, resp.Status)
	}
	last := page.Data[len(page.Data)-1]
	return page.Pagination.NextCursor, last.TrackedAt, last.ID, nil
}
