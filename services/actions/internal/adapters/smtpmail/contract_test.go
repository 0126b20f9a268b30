package smtpmail_test

import (
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/adapters/smtpmail"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider/providertest"
)

func TestMailerContract(t *testing.T) {
	providertest.RunMailer(t, func(t *testing.T, addr string) provider.Mailer {
		m, err := smtpmail.New(smtpmail.Config{Addr: addr, From: "SEO Desk <seo@agency.example>", TLS: smtpmail.TLSNone})
		if err != nil {
			t.Fatal(err)
		}
		return m
	})
}
