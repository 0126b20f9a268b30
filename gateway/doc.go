// Package gateway is Atrium's HTTP front door. It serves two listeners:
//
//   - the public listener: the JSON/REST API of the five services, each
//     route proxied by grpc-gateway to the owning service over gRPC, behind
//     API-key authentication or a signed-in person's session cookie (with
//     CSRF and same-origin checks, and Atrium-Agency and Atrium-Site
//     choosing whom the person acts for: sessions.go), and, with
//     --oidc-issuer, single sign-on's two browser routes (oidc.go);
//   - the admin listener: the provisioning API, behind the admin token, plus
//     /healthz (with the state of each service, checked in the background:
//     dependencies.go) and /readyz (the gateway itself can serve).
//
// A request is routed first (404 unknown route, 405 wrong method), then
// authenticated (401), authorised by scope and binding (403), and only then
// proxied. The caller's principal reaches the service signed in gRPC
// metadata; client-sent Grpc-Metadata-* headers, the Authorization header,
// the cookie and the client's X-Forwarded-For are never forwarded.
//
// Each listener serves a bounded number of requests at once (503 past it),
// and each API key may be held to a rate (429). On stop the gateway first
// reports not ready while still serving, then stops accepting and lets
// in-flight requests finish (Run).
package gateway
