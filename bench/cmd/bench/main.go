// Command bench measures Atrium's list routes against the hand-written floor
// (bench/floor) under the same load, in one invocation:
//
//	bench crm [flags]           GET /api/v1/prospects and /api/v1/deals
//	bench collections [flags]   item lists, one item and creates of the collections interface
//	bench data [flags]          the data read at offset 0, deep, and by cursor
//	bench actions [flags]       generate_blog end to end, with the delay to its event
//	bench webhooks [flags]      webhook deliveries from real writes, healthy and with failing endpoints
//	bench auth [flags]          a session against a key, logins, the API beside wrong passwords
//	bench realtime [flags]      10,000 open realtime streams, a write fanned out to 1,000 of them
//	bench schedules [flags]     10,000 schedules due in the same minute on two actions processes
//
// It creates a scratch PostgreSQL database, starts `atrium serve` on it and
// a floor server, seeds data through Atrium's admin API, and drives each
// server in turn with the same closed-loop load. On a machine with two or
// more cores the servers and their PostgreSQL backends share one core and
// the load generator has another, so that the generator measures the
// servers and not itself. It prints requests/s, p50 and p99 for both and
// Atrium's ratio to the floor; docs/performance.md records the figures.
//
// The roles run as separate processes of this same binary (bench floor,
// bench load), so each can be pinned to its core.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bench crm|collections|data|actions|webhooks|auth|studio|realtime|schedules [flags] | bench floor [flags] | bench load [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "crm":
		err = runCRM(ctx, os.Args[2:])
	case "collections":
		err = runCollections(ctx, os.Args[2:])
	case "data":
		err = runData(ctx, os.Args[2:])
	case "actions":
		err = runActions(ctx, os.Args[2:])
	case "webhooks":
		err = runWebhooks(ctx, os.Args[2:])
	case "auth":
		err = runAuth(ctx, os.Args[2:])
	case "studio":
		err = runStudio(ctx, os.Args[2:])
	case "realtime":
		err = runRealtime(ctx, os.Args[2:])
	case "schedules":
		err = runSchedules(ctx, os.Args[2:])
	case "floor":
		err = runFloor(ctx, os.Args[2:])
	case "load":
		err = runLoad(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
