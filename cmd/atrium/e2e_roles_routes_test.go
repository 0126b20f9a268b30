package main

// What each role may do is written once, in the proto's access rules and
// the roles' grants; docs/people.md's table of every route by role is
// generated from them (gateway/openapi's TestPeopleRoutesTable). This walks
// every operation of the public listener's document with a signed-in
// person of each role and holds the deployment to that table: a "—" is a
// 403 naming the role, anything else is never a 403. A route added
// tomorrow is judged here without anyone listing it.

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// peopleTable reads docs/people.md's routes table: "METHOD /path" → the
// cells of the roles, in the table's column order.
func peopleTable(t *testing.T) (roles []string, cells map[string][]string) {
	t.Helper()
	f, err := os.Open("../../docs/people.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cells = map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "<!-- routes table"):
			in = true
			continue
		case strings.HasPrefix(line, "<!-- end of routes table"):
			in = false
		}
		if !in || !strings.HasPrefix(line, "|") {
			continue
		}
		cols := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cols {
			cols[i] = strings.TrimSpace(cols[i])
		}
		switch {
		case cols[0] == "Route":
			roles = cols[1 : len(cols)-1] // the last column is the API key's
		case strings.HasPrefix(cols[0], "`"):
			cells[strings.Trim(cols[0], "`")] = cols[1 : len(cols)-1]
		}
	}
	if len(roles) != 5 || len(cells) < 50 {
		t.Fatalf("docs/people.md's routes table: roles %v, %d routes; want the five roles and every route", roles, len(cells))
	}
	return roles, cells
}

func testRolesEveryRoute(t *testing.T, s *stack) {
	roles, table := peopleTable(t)
	c := s.newCMS(t)
	item := c.createItem(t, "posts", map[string]any{"data": map[string]any{"title": "Walked"}})
	client := s.newClient(t, c.tenant, true)
	tag := c.agency

	// The owner is invited by the operator; the others by the owner. The
	// editor's membership names the site, so that "its sites" is this one.
	r := s.adminCall(t, "POST", "/admin/v1/agencies/"+c.agency+"/members", map[string]any{"email": "owner-" + tag + "@walk.example", "name": "O", "role": "owner"})
	wantStatus(t, r, http.StatusCreated)
	people := map[string]person{"owner": s.accept(t, invitationToken(t, r), "O")}
	for _, role := range roles {
		if role == "owner" {
			continue
		}
		body := map[string]any{"email": role + "-" + tag + "@walk.example", "role": role}
		switch role {
		case "editor":
			body["site_ids"] = []string{c.site}
		case "client":
			body["client_id"] = client
		}
		r := people["owner"].do(t, "POST", "/api/v1/members", body)
		wantStatus(t, r, http.StatusCreated)
		people[role] = s.accept(t, invitationToken(t, r), role)
	}

	doc := call(t, "GET", s.api+"/openapi.json", "", nil)
	wantStatus(t, doc, http.StatusOK)
	const fabricated = "0b9d6f0e-8d5e-4c1a-9a6e-2f1f3c4d5e6f"
	params := map[string]string{"collection_slug": "posts", "item_id": item["id"].(string), "version": "1", "slug": "posts"}
	var walked []string
	for path, ops := range doc.json["paths"].(map[string]any) {
		for method, op := range ops.(map[string]any) {
			method = strings.ToUpper(method)
			if !slices.Contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE"}, method) {
				continue
			}
			route := method + " " + path
			if sec, ok := op.(map[string]any)["security"].([]any); ok && len(sec) == 0 {
				continue // open to anyone: a session changes nothing there
			}
			if route == "DELETE /api/v1/sessions/current" {
				continue // signs the walker out; testPeopleSessions tries it
			}
			if route == "POST /api/public/v1/realtime" {
				// Live updates are a website's, subscribed with an API
				// key (docs/realtime.md), so the routes table, made from
				// the proto's rules, does not list them: a person's
				// session is refused whatever the role.
				for _, role := range roles {
					status, msg := people[role].probe(t, method, s.api+path, c.site)
					if status != http.StatusUnauthorized && status != http.StatusForbidden {
						t.Errorf("%s as %s: %d %q, want a refusal: it takes an API key", route, role, status, msg)
					}
				}
				continue
			}
			row, ok := table[route]
			if !ok {
				t.Errorf("%s is served but not in docs/people.md's routes table", route)
				continue
			}
			walked = append(walked, route)
			for i, role := range roles {
				target := s.api + fillPath(path, params, fabricated)
				if row[i] == "own client" {
					// The client member names their own client where the
					// route takes one.
					target += "?client_id=" + url.QueryEscape(client)
				}
				status, msg := people[role].probe(t, method, target, c.site)
				switch {
				case row[i] == "—":
					if status != http.StatusForbidden || !strings.Contains(msg, role+" role") {
						t.Errorf("%s as %s: %d %q; the table says no: want 403 naming the %s role", route, role, status, msg, role)
					}
				case status == http.StatusForbidden || status == http.StatusUnauthorized:
					t.Errorf("%s as %s: %d %q; the table says %q", route, role, status, msg, row[i])
				}
			}
		}
	}
	// Every row of the table was walked: the table lists no route the
	// deployment does not serve.
	for route, row := range table {
		if !slices.Contains(walked, route) && !slices.Contains(row, "anyone") && route != "DELETE /api/v1/sessions/current" {
			t.Errorf("docs/people.md lists %s, which the deployment's document does not", route)
		}
	}
}

// probe is probe (e2e_published_routes_test.go) with the person's cookie,
// CSRF token and the site header: the status and, for an error, the
// message; a 2xx body is not read (the event stream never ends).
func (p person) probe(t *testing.T, method, target, site string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var body io.Reader
	if method != "GET" && method != "DELETE" {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Cookie", "atrium_session="+p.cookie)
	req.Header.Set("Atrium-Site", site)
	if method != "GET" {
		req.Header.Set("X-CSRF-Token", p.csrf)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 300 {
		return resp.StatusCode, ""
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Errorf("%s %s: %d with a body that is not {\"error\": ...}: %v", method, target, resp.StatusCode, err)
	}
	return resp.StatusCode, e.Error
}
