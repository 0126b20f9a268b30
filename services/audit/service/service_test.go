package service_test

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/services/audit/service"
)

// TestSettings: the defaults are what docs/audit.md and
// docs/configuration.md say, the flags set them, and a bad value is
// refused naming the flag.
func TestSettings(t *testing.T) {
	d := service.DefaultSettings()
	if d.Retention != 400*24*time.Hour || d.Consumer != "atrium-audit" || d.PruneInterval != time.Hour || d.Stream != events.AuditStream.Name {
		t.Fatalf("defaults %+v, want 400 days, atrium-audit, hourly, ATRIUM_AUDIT", d)
	}
	fs := flag.NewFlagSet("atrium-audit", flag.ContinueOnError)
	d.BindFlags(fs)
	if err := fs.Parse([]string{"--audit-retention=720h", "--audit-consumer=audit-b"}); err != nil {
		t.Fatal(err)
	}
	if d.Retention != 720*time.Hour || d.Consumer != "audit-b" || d.Validate() != nil {
		t.Fatalf("after the flags: %+v (%v)", d, d.Validate())
	}
	for name, tc := range map[string]struct {
		s    service.Settings
		want string
	}{
		"negative retention":  {service.Settings{Retention: -time.Hour, Consumer: "a"}, "--audit-retention must not be negative"},
		"consumer with a dot": {service.Settings{Consumer: "a.b"}, "--audit-consumer must be a NATS consumer name"},
		"no consumer":         {service.Settings{}, "--audit-consumer must be a NATS consumer name"},
	} {
		if err := tc.s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	if err := (service.Settings{Consumer: "a"}).Validate(); err != nil {
		t.Fatalf("a retention of 0 (keep every event): %v", err)
	}
}
