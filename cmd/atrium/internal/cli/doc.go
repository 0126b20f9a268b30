// Package cli is the atrium binary's command line: the one command table
// from which dispatch, the usage text and the shell completions come
// (command.go), and the client commands, which call a running Atrium's API
// through the Go SDK (docs/cli.md), one file per noun.
//
// Each verb is built the way cli/cli builds its commands: a constructor
// (newDataReadCmd) that binds the verb's flags to an options struct
// (dataReadOptions) and takes a runF test seam, called with the parsed
// options instead of the verb's run function when a test sets it. The
// streams, the environment and the SDK's HTTP client come from Env, so
// that a test runs a command in-process against a server of its own.
//
// The server commands (serve, migrate, ...) live in package main and are
// handed to Run as Raw commands of the same table: they parse their own
// flags.
package cli
