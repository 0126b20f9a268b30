// Command quickstart is the first program a user of the Go SDK writes: it
// lists the agency's prospects, reads a client's keywords page after page,
// and runs an action, with the key from the environment:
//
//	ATRIUM_URL=http://127.0.0.1:8080 ATRIUM_API_KEY=atr_... go run ./examples/quickstart <client id>
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: quickstart <client id>")
	}
	client := atrium.New(os.Getenv("ATRIUM_URL"), os.Getenv("ATRIUM_API_KEY"))

	// Every prospect, however many pages.
	n := 0
	for p, err := range client.Prospects.All(ctx, nil) {
		if err != nil {
			return err
		}
		fmt.Printf("prospect: %s (%s)\n", p.BusinessName, p.PipelineStage)
		n++
	}
	fmt.Printf("%d prospects\n", n)

	// A client's keywords, oldest first, page after page by cursor.
	for row, err := range client.Data.All(ctx, atrium.DataQuery{Resource: "keywords", ClientID: args[0], Order: "created_at", Direction: "asc"}) {
		if err != nil {
			return err
		}
		fmt.Printf("keyword: %v at %v\n", row["keyword"], row["position"])
	}

	// An action: retried safely, never run twice.
	res, err := client.Actions.Run(ctx, "generate_gbp_post", args[0], map[string]any{"topic": "Fresh rye every Friday"})
	if err != nil {
		return err
	}
	fmt.Printf("generate_gbp_post: %s (%d), %d AI credits left\n", res.Status, res.StatusCode, res.Remaining.AI)
	return nil
}
