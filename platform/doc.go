// Package platform is the one module the Atrium services share. It holds only
// what is the same in every service and would otherwise be copied: the
// signed principal that crosses gRPC boundaries, the mapping of domain errors
// to gRPC status codes, pagination parsing, what a request value may be
// (value), the tenancy checks asked of the CRM (tenancy), which addresses
// an outbound request may reach (netguard), PostgreSQL helpers, the
// standard gRPC server, flag parsing from the environment and telemetry
// set-up. Domain logic never lives here.
package platform
