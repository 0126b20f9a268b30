// Package grpcserver serves the audit trail over gRPC: AuditService (an
// agency's owners, scoped by the principal's agency) and
// AuditAdminService (operators, every tenant or one).
package grpcserver
