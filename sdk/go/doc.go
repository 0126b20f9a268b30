// Package atrium is the Go client of Atrium's HTTP API: the collections
// interface (items and assets of a site), the agency CRM lists, the
// per-client data read, the actions and their runs, schedules, the client
// reports' branding and share links, and webhooks, with
// the admin API beside them for provisioning.
//
// It does what the API's documentation asks of a careful client, so that
// its users need not:
//
//   - Retries exactly as Atrium advises: 5xx answers, network errors and
//     time-outs only (never a 4xx, which a retry does not change), at most
//     5 attempts, waiting 250 ms doubling each time with jitter, or the
//     answer's Retry-After when it asks for longer.
//   - Every action it sends carries an Idempotency-Key, made once and sent
//     again with each retry, so that an action retried after a lost answer
//     is answered from the first run instead of running (and being charged)
//     twice. Other writes are retried only when the request cannot have
//     reached the data (the connection was refused, or Atrium answered 502
//     or 503, which it does only before a service was reached).
//   - A time-out of 30 s per attempt unless the context says otherwise
//     (WithTimeout changes it); a context everywhere.
//   - Errors as *Error: the status, Atrium's message (which says what was
//     wrong and what is allowed) and the request's trace id, to quote.
//   - Lists as iterators (iter.Seq2) that page for you, by cursor where the
//     route has one.
//   - Standard Webhooks verification for receivers (VerifyWebhook).
//
// A minimal program:
//
//	client := atrium.New("http://127.0.0.1:8080", os.Getenv("ATRIUM_API_KEY"))
//	for p, err := range client.Prospects.All(ctx, nil) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(p.BusinessName, p.PipelineStage)
//	}
//
// The package depends on the standard library only.
package atrium
