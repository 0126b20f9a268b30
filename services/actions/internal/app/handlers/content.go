package handlers

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The content actions: they ask the text generator for the pieces of a
// piece of writing and record it as a row of its dataset.

var (
	fieldTitle = provider.TextField{Name: "title", Description: "the title, under 60 characters, containing the keyword"}
	fieldMeta  = provider.TextField{Name: "meta_description", Description: "the meta description, 120 to 160 characters, containing the keyword"}
	fieldHTML  = provider.TextField{Name: "content", Description: "the article as HTML: an introduction in <p>, then <h2> sections with <p> paragraphs (and <ul>/<ol> lists where useful), 600 to 900 words"}
)

// GenerateBlog is generate_blog: a blog article for a keyword, a draft
// unless the client deploys without review.
func GenerateBlog(ctx context.Context, x *action.Exec) (action.Result, error) {
	kw, tone := x.Input.Str("keyword"), x.Input.Str("tone")
	t, err := write(ctx, x, provider.TextBlogArticle,
		fmt.Sprintf("Write a search-optimised blog article for %s about %q in a %s tone.", clientName(x), kw, tone),
		map[string]string{"keyword": kw, "tone": tone, "client_name": clientName(x), "client_domain": clientDomain(x)},
		fieldTitle, fieldMeta, fieldHTML)
	if err != nil {
		return action.Result{}, err
	}
	title := clip(oneLine(t.Fields["title"]), 200)
	status, published := published(x)
	row := map[string]any{
		"id": newID(x, "blogs", 0), "post_title": title, "slug": slug(title), "keyword": kw,
		"meta_description": clip(oneLine(t.Fields["meta_description"]), 160), "content": t.Fields["content"],
		"word_count": float64(provider.WordCount(t.Fields["content"])), "status": status, "published": published,
	}
	if c := x.Input.Str("category_id"); c != "" {
		row["category_id"] = c
	}
	if published {
		row["published_at"] = ts(x.Now)
	}
	return action.Result{Data: withModel(row, t.Model), Writes: []action.RecordWrite{{Resource: "blogs", Mode: action.Upsert, Rows: []map[string]any{row}}}}, nil
}

// GenerateGeoArticle is generate_geo_article: an article about a keyword
// in a city.
func GenerateGeoArticle(ctx context.Context, x *action.Exec) (action.Result, error) {
	kw, city, state := x.Input.Str("keyword"), x.Input.Str("city"), x.Input.Str("state")
	t, err := write(ctx, x, provider.TextGeoArticle,
		fmt.Sprintf("Write a locally targeted article for %s about %q in %s, %s: name the city in the title, the meta description and several sections, with local details.", clientName(x), kw, city, state),
		map[string]string{"keyword": kw, "city": city, "state": state, "client_name": clientName(x), "client_domain": clientDomain(x)},
		provider.TextField{Name: "title", Description: "the title, under 65 characters, containing the keyword and the city"},
		provider.TextField{Name: "meta_description", Description: "the meta description, 120 to 160 characters, containing the keyword and the city"},
		fieldHTML)
	if err != nil {
		return action.Result{}, err
	}
	status, published := published(x)
	row := map[string]any{
		"id": newID(x, "geo_articles", 0), "title": clip(oneLine(t.Fields["title"]), 200), "keyword": kw,
		"city": city, "state": state, "location": city + ", " + state,
		"meta_description": clip(oneLine(t.Fields["meta_description"]), 160), "content": t.Fields["content"],
		"status": status, "published": published,
	}
	if c := x.Input.Str("category_id"); c != "" {
		row["category_id"] = c
	}
	return action.Result{Data: withModel(row, t.Model), Writes: []action.RecordWrite{{Resource: "geo_articles", Mode: action.Upsert, Rows: []map[string]any{row}}}}, nil
}

// GeneratePressRelease is generate_press_release: a press release from a
// headline and key points.
func GeneratePressRelease(ctx context.Context, x *action.Exec) (action.Result, error) {
	headline, points := x.Input.Str("headline"), x.Input.Strs("body_points")
	t, err := write(ctx, x, provider.TextPressRelease,
		fmt.Sprintf("Write a press release for %s announcing: %s. Cover each of the points given, include a quote from a spokesperson and an 'About %s' paragraph.", clientName(x), headline, clientName(x)),
		map[string]string{"headline": headline, "body_points": strings.Join(points, "\n"), "client_name": clientName(x), "client_domain": clientDomain(x)},
		provider.TextField{Name: "title", Description: "the release's headline"},
		provider.TextField{Name: "body", Description: "the release as plain-text paragraphs separated by blank lines"})
	if err != nil {
		return action.Result{}, err
	}
	row := map[string]any{
		"id": newID(x, "press_releases", 0), "title": clip(oneLine(t.Fields["title"]), 200), "body": t.Fields["body"], "status": "draft",
	}
	return action.Result{Data: withModel(row, t.Model), Writes: []action.RecordWrite{{Resource: "press_releases", Mode: action.Upsert, Rows: []map[string]any{row}}}}, nil
}

// GenerateGBPPost is generate_gbp_post: a Google Business Profile post.
func GenerateGBPPost(ctx context.Context, x *action.Exec) (action.Result, error) {
	topic, cta := x.Input.Str("topic"), x.Input.Str("cta")
	t, err := write(ctx, x, provider.TextGBPPost,
		fmt.Sprintf("Write a Google Business Profile post for %s about %s, ending with a call to action (%s).", clientName(x), topic, orNone(cta)),
		map[string]string{"topic": topic, "cta": cta, "client_name": clientName(x)},
		provider.TextField{Name: "title", Description: "a short title, under 58 characters"},
		provider.TextField{Name: "body", Description: "the post, under 1,500 characters, plain text"})
	if err != nil {
		return action.Result{}, err
	}
	status, published := published(x)
	row := map[string]any{
		"id": newID(x, "gbp_posts", 0), "title": clip(oneLine(t.Fields["title"]), 200), "body": clip(t.Fields["body"], 1500), "status": status,
	}
	if cta != "" {
		row["cta"] = cta
	}
	if published {
		row["posted_at"] = ts(x.Now)
	}
	return action.Result{Data: withModel(row, t.Model), Writes: []action.RecordWrite{{Resource: "gbp_posts", Mode: action.Upsert, Rows: []map[string]any{row}}}}, nil
}

func orNone(s string) string {
	if s == "" {
		return "none given: choose one"
	}
	return s
}

// GenerateTopicalMap is generate_topical_map: pillar topics and the
// cluster articles under each, read from the generator's outline.
func GenerateTopicalMap(ctx context.Context, x *action.Exec) (action.Result, error) {
	topic, depth := x.Input.Str("topic"), x.Input.Int("depth")
	per := map[int]int{1: 2, 2: 4, 3: 6}[depth]
	t, err := write(ctx, x, provider.TextTopicalMap,
		fmt.Sprintf("Build a topical authority map for %q: 4 to 6 pillar topics, each with %d cluster articles.", topic, per),
		map[string]string{"topic": topic, "depth": strconv.Itoa(depth)},
		provider.TextField{Name: "outline", Description: fmt.Sprintf("one line per pillar, in the form 'Pillar: cluster; cluster; ...' with %d clusters each", per)},
		provider.TextField{Name: "summary", Description: "one or two sentences on how the pillars cover the topic"})
	if err != nil {
		return action.Result{}, err
	}
	var pillars []any
	for _, l := range lines(t.Fields["outline"]) {
		name, rest, ok := strings.Cut(l, ":")
		if !ok || strings.TrimSpace(name) == "" {
			continue
		}
		var clusters []any
		for _, c := range strings.Split(rest, ";") {
			if c = strings.TrimSpace(c); c != "" {
				clusters = append(clusters, c)
			}
		}
		pillars = append(pillars, map[string]any{"pillar": strings.TrimSpace(name), "clusters": clusters})
	}
	if len(pillars) == 0 {
		return action.Result{}, provider.Failure("text generator", 502, nil, "the text generator's outline had no 'Pillar: cluster; ...' lines")
	}
	row := map[string]any{
		"id": newID(x, "topical_maps", 0), "topic": topic, "depth": float64(depth),
		"pillar_count": float64(len(pillars)), "pillars": pillars, "summary": oneLine(t.Fields["summary"]),
	}
	return action.Result{Data: withModel(row, t.Model), Writes: []action.RecordWrite{{Resource: "topical_maps", Mode: action.Upsert, Rows: []map[string]any{row}}}}, nil
}
