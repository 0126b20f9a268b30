package handlers

import (
	"context"
	"errors"

	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The platform action: deploying the blog widget, and publishing a post.

// DeployBlog is deploy_blog: the client's blog widget recorded as
// deployed and, with post_id, that post published.
func DeployBlog(ctx context.Context, x *action.Exec) (action.Result, error) {
	data := map[string]any{}
	var writes []action.RecordWrite
	if id := x.Input.Str("post_id"); id != "" {
		post, err := x.Records.GetRecord(ctx, x.Client.ID, "blogs", id)
		if errors.Is(err, store.ErrNotFound) {
			return action.Result{}, provider.Failure("blog", 404, nil, "blog post %s not found among client %s's blogs", id, x.Client.ID)
		}
		if err != nil {
			return action.Result{}, provider.Failure("blog", 503, err, "cannot read blog post %s now; retry later", id)
		}
		post["status"], post["published"] = "published", true
		if post["published_at"] == nil {
			post["published_at"] = ts(x.Now)
		}
		delete(post, "updated_at")
		writes = append(writes, action.RecordWrite{Resource: "blogs", Mode: action.Update, Rows: []map[string]any{post}})
		data["published_post"] = map[string]any{"id": id, "post_title": post["post_title"], "status": "published", "published_at": post["published_at"]}
	}
	// One deployment record per client, updated by each deploy.
	widget := map[string]any{
		"id": keyID(x, "integrations", "blog_widget"), "name": "Blog widget", "provider": "atrium", "status": "deployed",
		"connected_at": ts(x.Now), "config": map[string]any{"client_id": x.Client.ID, "domain": clientDomain(x), "deployed_by_run": x.RunID},
	}
	writes = append(writes, action.RecordWrite{Resource: "integrations", Mode: action.Upsert, Rows: []map[string]any{widget}})
	data["id"], data["name"], data["status"], data["deployed_at"] = widget["id"], widget["name"], widget["status"], widget["connected_at"]
	return action.Result{Data: data, Writes: writes}, nil
}
