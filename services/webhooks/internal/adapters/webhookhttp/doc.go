// Package webhookhttp is the HTTP adapter of the deliverer's Sender port
// (app.Sender): it POSTs each attempt to the endpoint over a client that
// connects only where the deployment's netguard allows, follows no
// redirect, and keeps connections alive between attempts.
package webhookhttp
