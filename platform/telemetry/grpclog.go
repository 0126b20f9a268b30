package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"google.golang.org/grpc/grpclog"
)

// InstallGRPCLogger routes the log lines of gRPC and grpc-gateway (both log
// through grpclog) into logger: structured, with their text as an escaped
// value, never a caller's text on a raw stderr line. gRPC's informational
// chatter (connection state changes) goes to debug.
//
// grpclog's logger is process-wide and must be set before any gRPC
// activity: call this first thing in main.
func InstallGRPCLogger(logger *slog.Logger) {
	grpclog.SetLoggerV2(grpcLogger{logger.With("component", "grpc")})
}

type grpcLogger struct{ l *slog.Logger }

func (g grpcLogger) log(level slog.Level, msg string) {
	g.l.Log(context.Background(), level, msg)
}

func (g grpcLogger) Info(args ...any)   { g.log(slog.LevelDebug, fmt.Sprint(args...)) }
func (g grpcLogger) Infoln(args ...any) { g.log(slog.LevelDebug, fmt.Sprint(args...)) }
func (g grpcLogger) Infof(format string, args ...any) {
	g.log(slog.LevelDebug, fmt.Sprintf(format, args...))
}
func (g grpcLogger) Warning(args ...any)   { g.log(slog.LevelWarn, fmt.Sprint(args...)) }
func (g grpcLogger) Warningln(args ...any) { g.log(slog.LevelWarn, fmt.Sprint(args...)) }
func (g grpcLogger) Warningf(format string, args ...any) {
	g.log(slog.LevelWarn, fmt.Sprintf(format, args...))
}
func (g grpcLogger) Error(args ...any)   { g.log(slog.LevelError, fmt.Sprint(args...)) }
func (g grpcLogger) Errorln(args ...any) { g.log(slog.LevelError, fmt.Sprint(args...)) }
func (g grpcLogger) Errorf(format string, args ...any) {
	g.log(slog.LevelError, fmt.Sprintf(format, args...))
}
func (g grpcLogger) Fatal(args ...any)   { g.log(slog.LevelError, fmt.Sprint(args...)); os.Exit(1) }
func (g grpcLogger) Fatalln(args ...any) { g.log(slog.LevelError, fmt.Sprint(args...)); os.Exit(1) }
func (g grpcLogger) Fatalf(format string, args ...any) {
	g.log(slog.LevelError, fmt.Sprintf(format, args...))
	os.Exit(1)
}

// V reports whether verbosity level l is on: only at debug.
func (g grpcLogger) V(l int) bool { return g.l.Enabled(context.Background(), slog.LevelDebug) }
