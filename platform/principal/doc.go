// Package principal defines who is calling an Atrium service and carries that
// identity across gRPC boundaries in a form services can verify.
//
// The gateway authenticates an API key (or the admin token) and signs the
// resulting Principal with an HMAC key shared by every Atrium process. Each
// service's interceptor verifies the signature and expiry before a handler
// runs, so a caller that reaches a service's gRPC port directly cannot claim
// another tenant's identity without the shared secret.
package principal
