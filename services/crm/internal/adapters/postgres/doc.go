// Package postgres is the CRM store on PostgreSQL through pgx. It owns the
// crm schema; its migrations are embedded and applied by `atrium migrate` or
// at start-up with --migrate.
package postgres
