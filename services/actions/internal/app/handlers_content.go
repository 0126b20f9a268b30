package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
)

// The content actions: they ask the text generator for the pieces of a
// piece of writing and record it as a row of its dataset.

// write asks the text generator for fields and checks it gave them all.
func write(ctx context.Context, x *Exec, kind, instructions string, inputs map[string]string, fields ...TextField) (Text, error) {
	t, err := x.P.Text.Generate(ctx, TextRequest{Kind: kind, Instructions: instructions, Inputs: inputs, Fields: fields})
	if err != nil {
		return Text{}, err
	}
	for _, f := range fields {
		if strings.TrimSpace(t.Fields[f.Name]) == "" {
			return Text{}, ProviderFailure("text generator", 502, nil, "the text generator's answer had no %s", f.Name)
		}
	}
	return t, nil
}

var (
	fieldTitle = TextField{Name: "title", Description: "the title, under 60 characters, containing the keyword"}
	fieldMeta  = TextField{Name: "meta_description", Description: "the meta description, 120 to 160 characters, containing the keyword"}
	fieldHTML  = TextField{Name: "content", Description: "the article as HTML: an introduction in <p>, then <h2> sections with <p> paragraphs (and <ul>/<ol> lists where useful), 600 to 900 words"}
)

func runGenerateBlog(ctx context.Context, x *Exec) (Result, error) {
	kw, tone := x.Input.Str("keyword"), x.Input.Str("tone")
	t, err := write(ctx, x, TextBlogArticle,
		fmt.Sprintf("Write a search-optimised blog article for %s about %q in a %s tone.", x.clientName(), kw, tone),
		map[string]string{"keyword": kw, "tone": tone, "client_name": x.clientName(), "client_domain": x.clientDomain()},
		fieldTitle, fieldMeta, fieldHTML)
	if err != nil {
		return Result{}, err
	}
	title := clip(oneLine(t.Fields["title"]), 200)
	status, published := x.published()
	row := map[string]any{
		"id": x.newID("blogs", 0), "post_title": title, "slug": slug(title), "keyword": kw,
		"meta_description": clip(oneLine(t.Fields["meta_description"]), 160), "content": t.Fields["content"],
		"word_count": float64(WordCount(t.Fields["content"])), "status": status, "published": published,
	}
	if c := x.Input.Str("category_id"); c != "" {
		row["category_id"] = c
	}
	if published {
		row["published_at"] = ts(x.Now)
	}
	return Result{Data: withModel(row, t.Model), Writes: []RecordWrite{{Resource: "blogs", Mode: Upsert, Rows: []map[string]any{row}}}}, nil
}

// withModel is a record as the response shows it: the row, and what wrote
// it.
func withModel(row map[string]any, model string) map[string]any {
	out := make(map[string]any, len(row)+1)
	for k, v := range row {
		out[k] = v
	}
	out["model"] = model
	return out
}

func runGeoArticle(ctx context.Context, x *Exec) (Result, error) {
	kw, city, state := x.Input.Str("keyword"), x.Input.Str("city"), x.Input.Str("state")
	t, err := write(ctx, x, TextGeoArticle,
		fmt.Sprintf("Write a locally targeted article for %s about %q in %s, %s: name the city in the title, the meta description and several sections, with local details.", x.clientName(), kw, city, state),
		map[string]string{"keyword": kw, "city": city, "state": state, "client_name": x.clientName(), "client_domain": x.clientDomain()},
		TextField{Name: "title", Description: "the title, under 65 characters, containing the keyword and the city"},
		TextField{Name: "meta_description", Description: "the meta description, 120 to 160 characters, containing the keyword and the city"},
		fieldHTML)
	if err != nil {
		return Result{}, err
	}
	status, published := x.published()
	row := map[string]any{
		"id": x.newID("geo_articles", 0), "title": clip(oneLine(t.Fields["title"]), 200), "keyword": kw,
		"city": city, "state": state, "location": city + ", " + state,
		"meta_description": clip(oneLine(t.Fields["meta_description"]), 160), "content": t.Fields["content"],
		"status": status, "published": published,
	}
	if c := x.Input.Str("category_id"); c != "" {
		row["category_id"] = c
	}
	return Result{Data: withModel(row, t.Model), Writes: []RecordWrite{{Resource: "geo_articles", Mode: Upsert, Rows: []map[string]any{row}}}}, nil
}

func runPressRelease(ctx context.Context, x *Exec) (Result, error) {
	headline, points := x.Input.Str("headline"), x.Input.Strs("body_points")
	t, err := write(ctx, x, TextPressRelease,
		fmt.Sprintf("Write a press release for %s announcing: %s. Cover each of the points given, include a quote from a spokesperson and an 'About %s' paragraph.", x.clientName(), headline, x.clientName()),
		map[string]string{"headline": headline, "body_points": strings.Join(points, "\n"), "client_name": x.clientName(), "client_domain": x.clientDomain()},
		TextField{Name: "title", Description: "the release's headline"},
		TextField{Name: "body", Description: "the release as plain-text paragraphs separated by blank lines"})
	if err != nil {
		return Result{}, err
	}
	row := map[string]any{
		"id": x.newID("press_releases", 0), "title": clip(oneLine(t.Fields["title"]), 200), "body": t.Fields["body"], "status": "draft",
	}
	return Result{Data: withModel(row, t.Model), Writes: []RecordWrite{{Resource: "press_releases", Mode: Upsert, Rows: []map[string]any{row}}}}, nil
}

func runGBPPost(ctx context.Context, x *Exec) (Result, error) {
	topic, cta := x.Input.Str("topic"), x.Input.Str("cta")
	t, err := write(ctx, x, TextGBPPost,
		fmt.Sprintf("Write a Google Business Profile post for %s about %s, ending with a call to action (%s).", x.clientName(), topic, orNone(cta)),
		map[string]string{"topic": topic, "cta": cta, "client_name": x.clientName()},
		TextField{Name: "title", Description: "a short title, under 58 characters"},
		TextField{Name: "body", Description: "the post, under 1,500 characters, plain text"})
	if err != nil {
		return Result{}, err
	}
	status, published := x.published()
	row := map[string]any{
		"id": x.newID("gbp_posts", 0), "title": clip(oneLine(t.Fields["title"]), 200), "body": clip(t.Fields["body"], 1500), "status": status,
	}
	if cta != "" {
		row["cta"] = cta
	}
	if published {
		row["posted_at"] = ts(x.Now)
	}
	return Result{Data: withModel(row, t.Model), Writes: []RecordWrite{{Resource: "gbp_posts", Mode: Upsert, Rows: []map[string]any{row}}}}, nil
}

func orNone(s string) string {
	if s == "" {
		return "none given: choose one"
	}
	return s
}

func runOutreachEmail(ctx context.Context, x *Exec) (Result, error) {
	prospect, tone := x.Input.Str("prospectUrl"), x.Input.Str("tone")
	domain := hostOf(prospect)
	t, err := write(ctx, x, TextOutreachEmail,
		fmt.Sprintf("Write a short, personal outreach email from %s (%s) to the site %s proposing a collaboration (a guest post, a resource link or a partnership), in a %s tone.", x.clientName(), x.clientDomain(), domain, tone),
		map[string]string{"prospect_url": prospect, "prospect_domain": domain, "tone": tone, "client_name": x.clientName(), "client_domain": x.clientDomain()},
		TextField{Name: "subject", Description: "the subject line, under 70 characters"},
		TextField{Name: "body", Description: "the email as plain text, under 200 words, with a greeting and a sign-off"})
	if err != nil {
		return Result{}, err
	}
	row := map[string]any{
		"id": x.newID("backlink_outreach", 0), "target_domain": domain, "prospect_url": prospect,
		"subject": clip(oneLine(t.Fields["subject"]), 200), "body": t.Fields["body"], "status": "drafted",
		"notes": "Drafted by generate_outreach_email",
	}
	return Result{Data: withModel(row, t.Model), Writes: []RecordWrite{{Resource: "backlink_outreach", Mode: Upsert, Rows: []map[string]any{row}}}}, nil
}

// pillar is one line of a topical map's outline.
type pillar struct {
	Pillar   string   `json:"pillar"`
	Clusters []string `json:"clusters"`
}

func runTopicalMap(ctx context.Context, x *Exec) (Result, error) {
	topic, depth := x.Input.Str("topic"), x.Input.Int("depth")
	per := map[int]int{1: 2, 2: 4, 3: 6}[depth]
	t, err := write(ctx, x, TextTopicalMap,
		fmt.Sprintf("Build a topical authority map for %q: 4 to 6 pillar topics, each with %d cluster articles.", topic, per),
		map[string]string{"topic": topic, "depth": itoa(depth)},
		TextField{Name: "outline", Description: fmt.Sprintf("one line per pillar, in the form 'Pillar: cluster; cluster; ...' with %d clusters each", per)},
		TextField{Name: "summary", Description: "one or two sentences on how the pillars cover the topic"})
	if err != nil {
		return Result{}, err
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
		return Result{}, ProviderFailure("text generator", 502, nil, "the text generator's outline had no 'Pillar: cluster; ...' lines")
	}
	row := map[string]any{
		"id": x.newID("topical_maps", 0), "topic": topic, "depth": float64(depth),
		"pillar_count": float64(len(pillars)), "pillars": pillars, "summary": oneLine(t.Fields["summary"]),
	}
	return Result{Data: withModel(row, t.Model), Writes: []RecordWrite{{Resource: "topical_maps", Mode: Upsert, Rows: []map[string]any{row}}}}, nil
}

// Featured images are the social-card size.
const imageWidth, imageHeight = 1200, 630

func runBlogImage(ctx context.Context, x *Exec) (Result, error) {
	title, style := x.Input.Str("title"), x.Input.Str("style")
	img, err := x.P.Images.Render(ctx, ImageRequest{Title: title, Subtitle: x.clientDomainOrName(), Style: style, Width: imageWidth, Height: imageHeight})
	if err != nil {
		return Result{}, err
	}
	// The name is the capability: 128 random bits, so that only those
	// given the URL can fetch the image.
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Result{}, err
	}
	name := hex.EncodeToString(b[:]) + ".png"
	if err := x.P.Blobs.Put(ctx, name, "image/png", img.PNG); err != nil {
		return Result{}, fmt.Errorf("store the image: %w", err)
	}
	row := map[string]any{
		"id": x.newID("blog_images", 0), "title": title, "style": style, "url": x.P.MediaURL(name),
		"width": float64(img.Width), "height": float64(img.Height), "bytes": float64(len(img.PNG)), "content_type": "image/png",
	}
	return Result{Data: row, Writes: []RecordWrite{{Resource: "blog_images", Mode: Upsert, Rows: []map[string]any{row}}}}, nil
}

func (x *Exec) clientDomainOrName() string {
	if d := x.clientDomain(); d != "" {
		return d
	}
	return x.clientName()
}
