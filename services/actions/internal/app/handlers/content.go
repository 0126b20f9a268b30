package handlers

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/datasets"
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
	d := datasets.Blogs
	row := map[string]any{
		d.ID: newID(x, d.Resource, 0), d.PostTitle: title, d.Slug: slug(title), d.Keyword: kw,
		d.MetaDescription: clip(oneLine(t.Fields["meta_description"]), 160), d.Content: t.Fields["content"],
		d.WordCount: float64(provider.WordCount(t.Fields["content"])), d.Status: status, d.Published: published,
	}
	if c := x.Input.Str("category_id"); c != "" {
		row[d.CategoryID] = c
	}
	if published {
		row[d.PublishedAt] = ts(x.Now)
	}
	return action.Result{Data: withModel(row, t.Model), Writes: []action.RecordWrite{upsert(d.Resource, row)}}, nil
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
	d := datasets.GeoArticles
	row := map[string]any{
		d.ID: newID(x, d.Resource, 0), d.Title: clip(oneLine(t.Fields["title"]), 200), d.Keyword: kw,
		d.City: city, d.State: state, d.Location: city + ", " + state,
		d.MetaDescription: clip(oneLine(t.Fields["meta_description"]), 160), d.Content: t.Fields["content"],
		d.Status: status, d.Published: published,
	}
	if c := x.Input.Str("category_id"); c != "" {
		row[d.CategoryID] = c
	}
	return action.Result{Data: withModel(row, t.Model), Writes: []action.RecordWrite{upsert(d.Resource, row)}}, nil
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
	d := datasets.PressReleases
	row := map[string]any{
		d.ID: newID(x, d.Resource, 0), d.Title: clip(oneLine(t.Fields["title"]), 200), d.Body: t.Fields["body"], d.Status: "draft",
	}
	return action.Result{Data: withModel(row, t.Model), Writes: []action.RecordWrite{upsert(d.Resource, row)}}, nil
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
	d := datasets.GBPPosts
	row := map[string]any{
		d.ID: newID(x, d.Resource, 0), d.Title: clip(oneLine(t.Fields["title"]), 200), d.Body: clip(t.Fields["body"], 1500), d.Status: status,
	}
	if cta != "" {
		row[d.CTA] = cta
	}
	if published {
		row[d.PostedAt] = ts(x.Now)
	}
	return action.Result{Data: withModel(row, t.Model), Writes: []action.RecordWrite{upsert(d.Resource, row)}}, nil
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
	d := datasets.TopicalMaps
	row := map[string]any{
		d.ID: newID(x, d.Resource, 0), d.Topic: topic, d.Depth: float64(depth),
		d.PillarCount: float64(len(pillars)), d.Pillars: pillars, d.Summary: oneLine(t.Fields["summary"]),
	}
	return action.Result{Data: withModel(row, t.Model), Writes: []action.RecordWrite{upsert(d.Resource, row)}}, nil
}
