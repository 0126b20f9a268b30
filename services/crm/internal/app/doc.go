// Package app is the CRM service's domain and use cases: agencies, their
// members and clients, API keys, the prospect reports and deals of the
// agency CRM list interface, and people (docs/people.md): members' roles,
// invitations, users and their argon2id passwords, sessions and password
// resets.
//
// Each use case (Directory, Keys, Pipeline, People and Sessions) owns the
// port it needs, with only the reads and transaction methods it uses
// (DirectoryStore and DirectoryTx, KeyStore and KeyTx, PipelineStore and
// PipelineTx, PeopleStore and PeopleTx; SiteDirectory, Mailer); Store and
// Tx are their union, what a store adapter implements. The package
// knows nothing of gRPC, SQL or NATS. Every error it returns to a caller is an apperr.Error
// whose message says what was wrong and what is allowed.
package app
