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

// seedDemo provisions a demo tenant through the admin API, exactly as an
// operator would, and prints keys and curl lines to try.
func seedDemo(ctx context.Context, w io.Writer, l listening) error {
	admin := adminClient{base: "http://" + l.AdminAddr, token: l.AdminToken, http: &http.Client{Timeout: 10 * time.Second}}
	var out struct {
		Site   struct{ ID string }     `json:"site"`
		Agency struct{ ID string }     `json:"agency"`
		Member struct{ ID string }     `json:"member"`
		Client struct{ ID string }     `json:"client"`
		Key    struct{ Secret string } `json:"key"`
	}
	if err := admin.do(ctx, "POST", "/admin/v1/sites", map[string]any{"name": "Sunrise Bakery website"}, &out); err != nil {
		return err
	}
	site := out.Site.ID
	if err := admin.do(ctx, "POST", "/admin/v1/sites/"+site+"/collections", map[string]any{
		"name": "Blog posts", "slug": "posts", "fields": []map[string]any{
			{"key": "title", "type": "text", "required": true, "max_length": 200},
			{"key": "body", "type": "rich_text"},
			{"key": "category", "type": "select", "options": []string{"news", "recipes", "events"}},
			{"key": "publish_on", "type": "date"},
		},
	}, nil); err != nil {
		return err
	}
	if err := admin.do(ctx, "POST", "/admin/v1/sites/"+site+"/collections", map[string]any{
		"name": "Pages", "slug": "pages", "is_system": true, "fields": []map[string]any{
			{"key": "title", "type": "text", "required": true}, {"key": "body", "type": "rich_text"},
		},
	}, nil); err != nil {
		return err
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
			return err
		}
	}
	if err := admin.do(ctx, "POST", "/admin/v1/agencies", map[string]any{"name": "Northwind Digital"}, &out); err != nil {
		return err
	}
	agency := out.Agency.ID
	if err := admin.do(ctx, "POST", "/admin/v1/agencies/"+agency+"/members", map[string]any{"name": "Ana Lima", "email": "ana@northwind.example"}, &out); err != nil {
		return err
	}
	member := out.Member.ID
	var clients []string
	for _, c := range []map[string]any{
		{"name": "Sunrise Bakery", "domain": "sunrise-bakery.example"},
		{"name": "Harbor Dental", "domain": "harbor-dental.example"},
	} {
		if err := admin.do(ctx, "POST", "/admin/v1/clients", c, &out); err != nil {
			return err
		}
		if err := admin.do(ctx, "PUT", "/admin/v1/agencies/"+agency+"/clients/"+out.Client.ID, nil, nil); err != nil {
			return err
		}
		clients = append(clients, out.Client.ID)
	}
	bakery := clients[0]
	if err := admin.do(ctx, "POST", "/admin/v1/clients/"+bakery+"/datasets/keywords", map[string]any{"rows": []map[string]any{
		{"keyword": "sourdough bread", "position": 3, "url": "https://sunrise-bakery.example/bread", "search_volume": 1900, "difficulty": 41, "status": "active", "tracked_at": time.Now().UTC().Format(time.RFC3339)},
		{"keyword": "bakery near me", "position": 7, "search_volume": 12100, "difficulty": 58, "status": "active", "tracked_at": time.Now().UTC().Add(-24 * time.Hour).Format(time.RFC3339)},
		{"keyword": "wedding cakes", "position": 15, "search_volume": 4400, "difficulty": 35, "status": "paused"},
	}}, nil); err != nil {
		return err
	}
	if err := admin.do(ctx, "POST", "/admin/v1/agencies/"+agency+"/credits", map[string]any{"ai": 100, "data": 100}, nil); err != nil {
		return err
	}
	for _, p := range []map[string]any{
		{"business_name": "Green Leaf Cafe", "website_url": "https://greenleaf.example", "industry": "restaurants", "health_score": 64, "lead_score": 81, "pipeline_stage": "qualified"},
		{"business_name": "Peak Fitness", "website_url": "https://peakfitness.example", "industry": "fitness", "health_score": 48, "lead_score": 55},
		{"business_name": "Bright Smiles Orthodontics", "website_url": "https://brightsmiles.example", "industry": "healthcare", "health_score": 72, "lead_score": 90, "pipeline_stage": "proposal_sent"},
	} {
		if err := admin.do(ctx, "POST", "/admin/v1/agencies/"+agency+"/prospects", p, nil); err != nil {
			return err
		}
	}
	for _, d := range []map[string]any{
		{"owner_member_id": member, "title": "Local SEO retainer", "stage": "proposal", "value": 1800, "currency": "USD", "expected_close_date": time.Now().AddDate(0, 1, 0).Format(time.DateOnly)},
		{"owner_member_id": member, "title": "Website audit", "stage": "won", "value": 650, "currency": "USD", "expected_close_date": time.Now().Format(time.DateOnly)},
	} {
		if err := admin.do(ctx, "POST", "/admin/v1/agencies/"+agency+"/deals", d, nil); err != nil {
			return err
		}
	}
	keys := map[string]string{}
	for name, scopes := range map[string][]string{"read": {"read"}, "write": {"read", "write"}} {
		if err := admin.do(ctx, "POST", "/admin/v1/keys", map[string]any{"name": "demo " + name, "scopes": scopes, "site_id": site, "agency_id": agency}, &out); err != nil {
			return err
		}
		keys[name] = out.Key.Secret
	}
	api := "http://" + l.HTTPAddr
	fmt.Fprintf(w, `Demo data seeded: agency %s with 2 clients (Sunrise Bakery: %s), 3 prospects, 2 deals, 3 keyword rows and 100 AI + 100 data credits; site %s with collections posts and pages (system).
  admin token: %s
  read key:    %s   (scopes: read)
  write key:   %s   (scopes: read, write)

Try:
  curl -s -H "Authorization: Bearer %s" %s/api/v1/prospects
  curl -s -H "Authorization: Bearer %s" "%s/api/v1/deals?limit=1"
  curl -s -H "Authorization: Bearer %s" "%s/api/public/v1/collections/posts?limit=10"
  curl -s -H "Authorization: Bearer %s" "%s/api/v1/data?resource=keywords&client_id=%s&order=tracked_at"
  curl -s -X POST -H "Authorization: Bearer %s" -H "Content-Type: application/json" -d '{"action":"generate_blog","client_id":"%s","keyword":"sourdough starter"}' %s/api/v1/data
  curl -s -H "Authorization: Bearer %s" %s/api/v1/actions
  curl -s -X POST -H "Authorization: Bearer %s" -H "Content-Type: application/json" -d '{"name":"Acme Agency"}' http://%s/admin/v1/agencies

`, agency, bakery, site, l.AdminToken, keys["read"], keys["write"], keys["read"], api, keys["read"], api, keys["read"], api,
		keys["read"], api, bakery, keys["write"], bakery, api, keys["read"], api, l.AdminToken, l.AdminAddr)
	return nil
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
