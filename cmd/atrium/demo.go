package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The demo tenant's names: a restart on PostgreSQL finds the demo by them
// (an agency and a site so named, and the agency's client) instead of
// seeding a second one.
const (
	demoAgencyName = "Northwind Digital"
	demoSiteName   = "Sunrise Bakery website"
	demoClientName = "Sunrise Bakery"
)

// demoOrigins are the origins the demo site's pages may call the API from:
// the development servers of Next.js and most Node tools (3000), Astro
// (4321), Vite and SvelteKit (5173), Nuxt (3000), and a plain static server
// (8000), on localhost and 127.0.0.1.
var demoOrigins = []string{
	"http://localhost:3000", "http://localhost:4321", "http://localhost:5173", "http://localhost:8000",
	"http://127.0.0.1:3000", "http://127.0.0.1:4321", "http://127.0.0.1:5173", "http://127.0.0.1:8000",
}

// demo is what the banner says about the demo tenant.
type demo struct {
	// found: the data was seeded at an earlier start (PostgreSQL) and is
	// reused; only the keys are new.
	found                bool
	agency, site, bakery string
	// read and write are keys issued for this run: a key's secret is shown
	// only when it is issued.
	read, write string
	// signIn is the link with which the demo's owner sets a password and
	// signs in to Atrium Studio: the invitation when the owner is new, a
	// password reset at a later start; "" if neither could be made.
	signIn string
}

// demoOwnerEmail is the demo agency's owner, whose sign-in link the banner
// prints.
const demoOwnerEmail = "ana@northwind.example"

// seedDemo provisions a demo tenant through the admin API, exactly as an
// operator would, unless an earlier start already did (the store is
// PostgreSQL); either way it issues a read and a write key for this run.
func seedDemo(ctx context.Context, l listening) (demo, error) {
	admin := adminClient{base: "http://" + l.AdminAddr, token: l.AdminToken, http: &http.Client{Timeout: 10 * time.Second}}
	d, err := findDemo(ctx, admin)
	if err != nil {
		return demo{}, err
	}
	if !d.found {
		if d, err = seedDemoData(ctx, admin); err != nil {
			return demo{}, err
		}
	} else {
		// The owner accepted the invitation at an earlier start: a reset
		// link signs them in again. If they never did, the invitation
		// printed then still works until it expires.
		var reset struct{ URL string }
		if admin.do(ctx, "POST", "/admin/v1/password-resets", map[string]any{"email": demoOwnerEmail}, &reset) == nil {
			d.signIn = reset.URL
		}
	}
	var out struct {
		Key struct{ Secret string } `json:"key"`
	}
	for _, k := range []struct {
		name   string
		scopes []string
		secret *string
	}{{"demo read", []string{"read"}, &d.read}, {"demo write", []string{"read", "write"}, &d.write}} {
		if err := admin.do(ctx, "POST", "/admin/v1/keys", map[string]any{"name": k.name, "scopes": k.scopes, "site_id": d.site, "agency_id": d.agency}, &out); err != nil {
			return demo{}, err
		}
		*k.secret = out.Key.Secret
	}
	return d, nil
}

// findDemo looks for the demo tenant through the admin lists: the newest
// agency and site with the demo's names, and the agency's demo client.
func findDemo(ctx context.Context, admin adminClient) (demo, error) {
	var d demo
	var err error
	if d.agency, err = findByName(ctx, admin, "/admin/v1/agencies?", "agencies", demoAgencyName); err != nil || d.agency == "" {
		return demo{}, err
	}
	if d.site, err = findByName(ctx, admin, "/admin/v1/sites?", "sites", demoSiteName); err != nil || d.site == "" {
		return demo{}, err
	}
	if d.bakery, err = findByName(ctx, admin, "/admin/v1/clients?agency_id="+d.agency+"&", "clients", demoClientName); err != nil || d.bakery == "" {
		return demo{}, err
	}
	d.found = true
	return d, nil
}

// findByName pages through an admin list (newest first) for the first row
// named name, and returns its id, or "" when there is none.
func findByName(ctx context.Context, admin adminClient, list, field, name string) (string, error) {
	const limit = 200
	for offset := 0; ; offset += limit {
		var page map[string][]struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		}
		if err := admin.do(ctx, "GET", fmt.Sprintf("%slimit=%d&offset=%d", list, limit, offset), nil, &page); err != nil {
			return "", err
		}
		for _, row := range page[field] {
			if row.Name == name {
				return row.ID, nil
			}
		}
		if len(page[field]) < limit {
			return "", nil
		}
	}
}

// seedDemoData creates the demo tenant: a site with two collections and
// three items, an agency with a member, two linked clients, keyword rows,
// credits, prospects and deals.
func seedDemoData(ctx context.Context, admin adminClient) (demo, error) {
	var out struct {
		Site       struct{ ID string }  `json:"site"`
		Agency     struct{ ID string }  `json:"agency"`
		Member     struct{ ID string }  `json:"member"`
		Client     struct{ ID string }  `json:"client"`
		Invitation struct{ URL string } `json:"invitation"`
	}
	if err := admin.do(ctx, "POST", "/admin/v1/sites", map[string]any{"name": demoSiteName}, &out); err != nil {
		return demo{}, err
	}
	site := out.Site.ID
	// A first page in a browser calls the API from a development server:
	// the demo site admits the usual local ones, so that the first fetch
	// works instead of failing on CORS with "Failed to fetch".
	if err := admin.do(ctx, "PUT", "/admin/v1/sites/"+site+"/allowed_origins", map[string]any{"allowed_origins": demoOrigins}, nil); err != nil {
		return demo{}, err
	}
	if err := admin.do(ctx, "POST", "/admin/v1/sites/"+site+"/collections", map[string]any{
		"name": "Blog posts", "slug": "posts", "fields": []map[string]any{
			{"key": "title", "type": "text", "required": true, "max_length": 200},
			{"key": "body", "type": "rich_text"},
			{"key": "category", "type": "select", "options": []string{"news", "recipes", "events"}},
			{"key": "publish_on", "type": "date"},
		},
	}, nil); err != nil {
		return demo{}, err
	}
	if err := admin.do(ctx, "POST", "/admin/v1/sites/"+site+"/collections", map[string]any{
		"name": "Pages", "slug": "pages", "is_system": true, "fields": []map[string]any{
			{"key": "title", "type": "text", "required": true}, {"key": "body", "type": "rich_text"},
		},
	}, nil); err != nil {
		return demo{}, err
	}
	for _, it := range []struct {
		slug string
		body map[string]any
	}{
		{"posts", map[string]any{"data": map[string]any{"title": "Our new sourdough", "body": "<p>Baked every morning.</p>", "category": "recipes"}, "is_published": true}},
		{"posts", map[string]any{"data": map[string]any{"title": "Holiday hours", "category": "news"}}},
		{"pages", map[string]any{"data": map[string]any{"title": "About us", "body": "<p>A family bakery since 1982.</p>"}, "is_published": true}},
	} {
		if err := admin.do(ctx, "POST", "/admin/v1/sites/"+site+"/collections/"+it.slug+"/items", it.body, nil); err != nil {
			return demo{}, err
		}
	}
	if err := admin.do(ctx, "POST", "/admin/v1/agencies", map[string]any{"name": demoAgencyName}, &out); err != nil {
		return demo{}, err
	}
	agency := out.Agency.ID
	if err := admin.do(ctx, "POST", "/admin/v1/agencies/"+agency+"/members", map[string]any{"name": "Ana Lima", "email": demoOwnerEmail, "role": "owner"}, &out); err != nil {
		return demo{}, err
	}
	member, signIn := out.Member.ID, out.Invitation.URL
	var clients []string
	for _, c := range []map[string]any{
		{"name": demoClientName, "domain": "sunrise-bakery.example"},
		{"name": "Harbor Dental", "domain": "harbor-dental.example"},
	} {
		if err := admin.do(ctx, "POST", "/admin/v1/clients", c, &out); err != nil {
			return demo{}, err
		}
		if err := admin.do(ctx, "PUT", "/admin/v1/agencies/"+agency+"/clients/"+out.Client.ID, nil, nil); err != nil {
			return demo{}, err
		}
		clients = append(clients, out.Client.ID)
	}
	bakery := clients[0]
	// The bakery's site belongs to the agency, for the bakery: the demo
	// keys, bound to both, may reach it (docs/architecture.md#tenancy-model).
	if err := admin.do(ctx, "PATCH", "/admin/v1/sites/"+site, map[string]any{"agency_id": agency, "client_id": bakery}, nil); err != nil {
		return demo{}, err
	}
	if err := admin.do(ctx, "POST", "/admin/v1/clients/"+bakery+"/datasets/keywords", map[string]any{"rows": []map[string]any{
		{"keyword": "sourdough bread", "position": 3, "url": "https://sunrise-bakery.example/bread", "search_volume": 1900, "difficulty": 41, "status": "active", "tracked_at": time.Now().UTC().Format(time.RFC3339)},
		{"keyword": "bakery near me", "position": 7, "search_volume": 12100, "difficulty": 58, "status": "active", "tracked_at": time.Now().UTC().Add(-24 * time.Hour).Format(time.RFC3339)},
		{"keyword": "wedding cakes", "position": 15, "search_volume": 4400, "difficulty": 35, "status": "paused"},
	}}, nil); err != nil {
		return demo{}, err
	}
	if err := admin.do(ctx, "POST", "/admin/v1/agencies/"+agency+"/credits", map[string]any{"ai": 100, "data": 100}, nil); err != nil {
		return demo{}, err
	}
	for _, p := range []map[string]any{
		{"business_name": "Green Leaf Cafe", "website_url": "https://greenleaf.example", "industry": "restaurants", "health_score": 64, "lead_score": 81, "pipeline_stage": "qualified"},
		{"business_name": "Peak Fitness", "website_url": "https://peakfitness.example", "industry": "fitness", "health_score": 48, "lead_score": 55},
		{"business_name": "Bright Smiles Orthodontics", "website_url": "https://brightsmiles.example", "industry": "healthcare", "health_score": 72, "lead_score": 90, "pipeline_stage": "proposal_sent"},
	} {
		if err := admin.do(ctx, "POST", "/admin/v1/agencies/"+agency+"/prospects", p, nil); err != nil {
			return demo{}, err
		}
	}
	for _, d := range []map[string]any{
		{"owner_member_id": member, "title": "Local SEO retainer", "stage": "proposal", "value": 1800, "currency": "USD", "expected_close_date": time.Now().AddDate(0, 1, 0).Format(time.DateOnly)},
		{"owner_member_id": member, "title": "Website audit", "stage": "won", "value": 650, "currency": "USD", "expected_close_date": time.Now().Format(time.DateOnly)},
	} {
		if err := admin.do(ctx, "POST", "/admin/v1/agencies/"+agency+"/deals", d, nil); err != nil {
			return demo{}, err
		}
	}
	return demo{agency: agency, site: site, bakery: bakery, signIn: signIn}, nil
}

type adminClient struct {
	base, token string
	http        *http.Client
}

func (c adminClient) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
