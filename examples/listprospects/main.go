// Command listprospects lists an agency's prospects through the CRM
// service's gRPC API, as an internal service would: it signs a service
// principal acting for the agency with the deployment's internal secret,
// and reads the typed response. docs/grpc.md shows this file.
//
//	ATRIUM_INTERNAL_SECRET=... go run ./examples/listprospects -crm 127.0.0.1:9092 -agency <agency id>
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/atrium-hq/atrium/platform/principal"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

func main() {
	addr := flag.String("crm", "127.0.0.1:9092", "the CRM service's gRPC address")
	agency := flag.String("agency", "", "the agency to list the prospects of")
	flag.Parse()
	if err := listProspects(context.Background(), os.Stdout, *addr, []byte(os.Getenv("ATRIUM_INTERNAL_SECRET")), *agency); err != nil {
		log.Fatal(err)
	}
}

func listProspects(ctx context.Context, out io.Writer, addr string, secret []byte, agencyID string) error {
	signer, err := principal.NewSigner(secret)
	if err != nil {
		return err
	}
	// A service principal acting for one agency, with the read scope: it may
	// do what a read key of that agency may do, and nothing else.
	me := principal.Principal{Kind: principal.KindService, Subject: "reporting-job",
		AgencyID: agencyID, Scopes: []principal.Scope{principal.ScopeRead}}
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(signer.Credentials(me)))
	if err != nil {
		return err
	}
	defer conn.Close()

	crm := crmv1.NewCRMServiceClient(conn)
	limit := int32(200)
	for offset := int32(0); ; offset += limit {
		page, err := crm.ListProspects(ctx, &crmv1.ListProspectsRequest{Limit: &limit, Offset: &offset})
		if err != nil {
			return err
		}
		for _, p := range page.Data {
			fmt.Fprintf(out, "%s  %-28s %-14s lead %3.0f\n", p.Id, p.BusinessName, p.PipelineStage, p.LeadScore)
		}
		if len(page.Data) < int(limit) {
			return nil
		}
	}
}
