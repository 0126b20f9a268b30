// Command pocketbase-peer runs PocketBase beside Atrium in `bench
// collections`: the peer a user would pick instead, on the same records
// and the same load. It is its own module, outside the Go workspace, so
// that PocketBase's dependencies never reach Atrium's; the Makefile builds
// it with GOWORK=off.
//
// It opens a PocketBase app in --dir with PocketBase's defaults (SQLite in
// WAL mode with synchronous=NORMAL, request logging on), defines a posts
// collection with the fields of the bench's Atrium collection (title,
// body, category, rating, views, and is_published, which Atrium has as a
// property of every item) and a neighbour collection, writes --items posts
// (and a fifth as many neighbours) through PocketBase's Go API in
// transactions of 1,000, creates a user whose auth token the load sends,
// serves PocketBase's REST API on --addr, and prints one JSON line
// {"addr", "token", "item"} once it is ready. One route of its own,
// POST /_bench/reset, deletes the posts the bench's create route wrote
// (titled "Benchmark post"), so that the next run lists the same records.
//
// Every rule of the two collections is `@request.auth.id != ""`: each
// request is authenticated, as every request to Atrium is with its API key.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	_ "github.com/pocketbase/pocketbase/migrations" // PocketBase's own tables
	"github.com/pocketbase/pocketbase/tools/types"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "pocketbase-peer:", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("dir", "", "PocketBase's data directory (created; required)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address; port 0 picks a free port")
	items := flag.Int("items", 20_000, "posts to write")
	flag.Parse()
	if *dir == "" {
		return fmt.Errorf("--dir is required")
	}
	app := core.NewBaseApp(core.BaseAppConfig{DataDir: *dir})
	if err := app.Bootstrap(); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if err := app.RunAllMigrations(); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	token, item, err := seed(app, *items)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	app.OnServe().BindFunc(func(e *core.ServeEvent) error {
		e.Listener = lis
		e.InstallerFunc = nil // no superuser installer link
		e.Router.POST("/_bench/reset", func(re *core.RequestEvent) error {
			_, err := re.App.DB().NewQuery("DELETE FROM posts WHERE title = {:title}").Bind(dbx.Params{"title": "Benchmark post"}).Execute()
			if err != nil {
				return err
			}
			return re.NoContent(http.StatusNoContent)
		}).Bind(apis.RequireAuth())
		if err := e.Next(); err != nil {
			return err
		}
		b, _ := json.Marshal(map[string]string{"addr": lis.Addr().String(), "token": token, "item": item})
		fmt.Println(string(b))
		return nil
	})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = app.OnTerminate().Trigger(&core.TerminateEvent{App: app}, func(e *core.TerminateEvent) error { return e.App.ResetBootstrapState() })
	}()
	return apis.Serve(app, apis.ServeConfig{HttpAddr: lis.Addr().String()})
}

// authenticated is every rule of the bench's collections.
const authenticated = `@request.auth.id != ""`

// seed defines the collections and the user, writes the posts, and
// returns the user's token and the id of the post in the middle of the
// newest-first order.
func seed(app core.App, n int) (token, item string, err error) {
	users, err := app.FindCollectionByNameOrId("users")
	if err != nil {
		return "", "", fmt.Errorf("users collection: %w", err)
	}
	user := core.NewRecord(users)
	user.SetEmail("bench@bench.example")
	user.SetPassword("bench-password-0123456789")
	user.SetVerified(true)
	if err := app.Save(user); err != nil {
		return "", "", fmt.Errorf("create user: %w", err)
	}
	if token, err = user.NewAuthToken(); err != nil {
		return "", "", err
	}
	posts := collection("posts",
		&core.TextField{Name: "title", Required: true},
		&core.EditorField{Name: "body"},
		&core.SelectField{Name: "category", Values: []string{"news", "recipes", "events"}, MaxSelect: 1},
		&core.NumberField{Name: "rating"},
		&core.NumberField{Name: "views", OnlyInt: true},
		&core.BoolField{Name: "is_published"},
	)
	other := collection("other", &core.TextField{Name: "title"})
	for _, c := range []*core.Collection{posts, other} {
		if err := app.Save(c); err != nil {
			return "", "", fmt.Errorf("create collection %s: %w", c.Name, err)
		}
	}
	// Oldest first, one second apart, ending now: the newest-first list
	// starts with the last one written, as in Atrium's seeding.
	start := time.Now().UTC().Add(-time.Duration(n) * time.Second)
	body := strings.Repeat("<p>Lorem ipsum dolor sit amet.</p>", 4)
	categories := []string{"news", "recipes", "events"}
	write := func(c *core.Collection, count int, fill func(*core.Record, int)) ([]string, error) {
		ids := make([]string, 0, count)
		for from := 0; from < count; from += 1000 {
			err := app.RunInTransaction(func(tx core.App) error {
				for i := from; i < min(from+1000, count); i++ {
					r := core.NewRecord(c)
					fill(r, i)
					at, _ := types.ParseDateTime(start.Add(time.Duration(i) * time.Second))
					r.SetRaw("created", at)
					r.SetRaw("updated", at)
					if err := tx.SaveNoValidate(r); err != nil {
						return err
					}
					ids = append(ids, r.Id)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("write %s: %w", c.Name, err)
			}
		}
		return ids, nil
	}
	ids, err := write(posts, n, func(r *core.Record, i int) {
		r.Set("title", fmt.Sprintf("Post %d about bread & cake", i))
		r.Set("body", body)
		r.Set("category", categories[i%3])
		r.Set("rating", float64(i%50)/10)
		r.Set("views", i)
		r.Set("is_published", i%4 != 0)
	})
	if err != nil {
		return "", "", err
	}
	if _, err := write(other, n/5, func(r *core.Record, i int) { r.Set("title", fmt.Sprintf("Other %d", i)) }); err != nil {
		return "", "", err
	}
	if n == 0 {
		return token, "", nil
	}
	return token, ids[n/2], nil
}

// collection is a base collection with created and updated dates, an
// index for the newest-first list, and every rule authenticated.
func collection(name string, fields ...core.Field) *core.Collection {
	c := core.NewBaseCollection(name)
	for _, f := range fields {
		c.Fields.Add(f)
	}
	c.Fields.Add(&core.AutodateField{Name: "created", OnCreate: true}, &core.AutodateField{Name: "updated", OnCreate: true, OnUpdate: true})
	c.AddIndex("idx_"+name+"_created", false, "created", "")
	rule := types.Pointer(authenticated)
	c.ListRule, c.ViewRule, c.CreateRule, c.UpdateRule, c.DeleteRule = rule, rule, rule, rule, rule
	return c
}
