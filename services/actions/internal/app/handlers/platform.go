package handlers

import (
	"context"
	"errors"

	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/datasets"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The platform action: deploying the blog widget, and publishing a post.

// DeployBlog is deploy_blog: the client's blog widget recorded as
// deployed and, with post_id, that post published.
func DeployBlog(ctx context.Context, x *action.Exec) (action.Result, error) {
	data := map[string]any{}
	var writes []action.RecordWrite
	b, w := datasets.Blogs, datasets.Integrations
	if id := x.Input.Str("post_id"); id != "" {
		post, err := x.Records.GetRecord(ctx, x.Client.ID, b.Resource, id)
		if errors.Is(err, store.ErrNotFound) {
			return action.Result{}, provider.Failure("blog", 404, nil, "blog post %s not found among client %s's blogs", id, x.Client.ID)
		}
		if err != nil {
			return action.Result{}, provider.Failure("blog", 503, err, "cannot read blog post %s now; retry later", id)
		}
		post[b.Status], post[b.Published] = "published", true
		if post[b.PublishedAt] == nil {
			post[b.PublishedAt] = ts(x.Now)
		}
		delete(post, b.UpdatedAt)
		writes = append(writes, action.RecordWrite{Resource: b.Resource, Mode: action.Update, Rows: []map[string]any{post}})
		data["published_post"] = map[string]any{"id": id, "post_title": post[b.PostTitle], "status": "published", "published_at": post[b.PublishedAt]}
	}
	// One deployment record per client, updated by each deploy.
	widget := map[string]any{
		w.ID: keyID(x, w.Resource, "blog_widget"), w.Name: "Blog widget", w.Provider: "atrium", w.Status: "deployed",
		w.ConnectedAt: ts(x.Now), w.Config: map[string]any{"client_id": x.Client.ID, "domain": clientDomain(x), "deployed_by_run": x.RunID},
	}
	writes = append(writes, upsert(w.Resource, widget))
	data["id"], data["name"], data["status"], data["deployed_at"] = widget[w.ID], widget[w.Name], widget[w.Status], widget[w.ConnectedAt]
	return action.Result{Data: data, Writes: writes}, nil
}
