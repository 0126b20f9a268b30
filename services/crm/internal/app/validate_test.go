package app

import (
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// invalid asserts err is an InvalidArgument whose message has every word.
func invalid(t *testing.T, err error, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want an error mentioning %q", words)
	}
	if apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("error %v is not InvalidArgument", err)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not mention %q", err, w)
		}
	}
}

// The text, id, URL and date rules are the platform's (platform/value,
// tested there); these test what the CRM adds: trimming, host names from
// URLs, lower-case emails, scores, money and codes.

func TestHostnameAndURL(t *testing.T) {
	if h, err := hostname("domain", " WWW.Example.COM. "); err != nil || h != "www.example.com" {
		t.Fatalf("hostname normalises: %q %v", h, err)
	}
	for _, bad := range []string{"localhost", "-a.com", "a..com", "exa mple.com", strings.Repeat("a", 64) + ".com", "1.2.3.4:80", "1.2.3.4"} {
		_, err := hostname("domain", bad)
		invalid(t, err, "domain must be a host name", "example.com")
	}
	if u, host, err := httpURL("website_url", "https://Shop.example/menu?x=1"); err != nil || host != "Shop.example" || u != "https://Shop.example/menu?x=1" {
		t.Fatalf("httpURL: %q %q %v", u, host, err)
	}
	for _, bad := range []string{"", "ftp://a.example", "//a.example", "https://", "example.com", "https://a.example/" + strings.Repeat("x", 2048),
		"https://a.example/\x00", "https://user:pw@a.example/"} {
		_, _, err := httpURL("website_url", bad)
		invalid(t, err, "website_url must be an absolute http or https URL")
	}
}

func TestNumbersDatesAndCodes(t *testing.T) {
	for _, v := range []float64{-0.1, 100.01, math.NaN(), math.Inf(1)} {
		_, err := score("lead_score", v)
		invalid(t, err, "lead_score must be a number from 0 to 100")
	}
	if _, err := score("lead_score", 100); err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{-1, math.NaN(), math.Inf(1), 2e15} {
		_, err := money(v)
		invalid(t, err, "value must be a number from 0 to 1e15")
	}
	for _, v := range []string{"2026-02-30", "2026-1-5", "05/01/2026", "", "0000-01-01"} {
		_, err := date("expected_close_date", v)
		invalid(t, err, "expected_close_date must be a date YYYY-MM-DD")
	}
	if c, err := currency(" usd "); err != nil || c != "USD" {
		t.Fatalf("currency upper-cases: %q %v", c, err)
	}
	for _, v := range []string{"US", "USDT", "U$D", "€"} {
		_, err := currency(v)
		invalid(t, err, "three-letter ISO 4217 code")
	}
	_, err := oneOf("stage", "closed", DealStages)
	invalid(t, err, "stage must be one of: lead, qualified, proposal, negotiation, won, lost", `"closed"`)
}

func TestProspectFieldsApply(t *testing.T) {
	pr := Prospect{BusinessName: "Old", WebsiteURL: "https://old.example", Domain: "old.example", PipelineStage: "new"}
	err := ProspectFields{WebsiteURL: new("https://www.New.example/shop"), LeadScore: new(80.0)}.apply(&pr)
	if err != nil || pr.Domain != "www.new.example" || pr.LeadScore != 80 || pr.BusinessName != "Old" {
		t.Fatalf("website change: %+v %v; want the domain to follow the host and other fields kept", pr, err)
	}
	err = ProspectFields{WebsiteURL: new("https://a.example"), Domain: new("Brand.example")}.apply(&pr)
	if err != nil || pr.Domain != "brand.example" {
		t.Fatalf("explicit domain wins: %+v %v", pr, err)
	}
	err = ProspectFields{WebsiteURL: new("http://localhost:8080/")}.apply(&pr)
	invalid(t, err, "website_url's host", "send domain explicitly")
	err = ProspectFields{PipelineStage: new("closed")}.apply(&pr)
	invalid(t, err, "pipeline_stage must be one of: new, contacted")
	err = ProspectFields{Industry: new("  ")}.apply(&pr)
	if err != nil || pr.Industry != "" {
		t.Fatalf("industry may be cleared: %+v %v", pr, err)
	}
}

func TestDealFieldsApply(t *testing.T) {
	d := Deal{Title: "Old", Stage: "lead", Currency: "USD"}
	if err := (DealFields{Title: new(" Retainer "), Currency: new("eur"), Value: new(1500.0)}).apply(&d); err != nil ||
		d.Title != "Retainer" || d.Currency != "EUR" || d.Value != 1500 || d.Stage != "lead" {
		t.Fatalf("apply: %+v %v", d, err)
	}
	invalid(t, DealFields{OwnerMemberID: new("bob")}.apply(&d), "owner_member_id must be a UUID")
	invalid(t, DealFields{ExpectedCloseDate: new("soon")}.apply(&d), "expected_close_date")
}

// The proto comments are what the OpenAPI documents turn into
// enumerations; they must list exactly the stages the rules accept.
func TestProtoDocumentsTheStages(t *testing.T) {
	b, err := os.ReadFile("../../../../proto/atrium/crm/v1/crm.proto")
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string][]string{"pipeline_stage": PipelineStages, "stage": DealStages} {
		re := regexp.MustCompile(`// One of: ([a-z_, ]+)\.\n\s+string ` + field + ` = `)
		m := re.FindSubmatch(b)
		if m == nil {
			t.Fatalf("crm.proto documents no values for %s", field)
		}
		if got := strings.Split(string(m[1]), ", "); !slices.Equal(got, want) {
			t.Fatalf("crm.proto documents %s as %v; the rules accept %v", field, got, want)
		}
	}
}

func TestEmailAddress(t *testing.T) {
	if v, err := emailAddress(" Ana@Example.COM "); err != nil || v != "ana@example.com" {
		t.Fatalf("emailAddress trims and lower-cases: %q %v", v, err)
	}
	for _, bad := range []string{"", "Ana <ana@example.com>", "josé@example.com", "bob@[127.0.0.1]", "ana@localhost", "a\x00@example.com"} {
		_, err := emailAddress(bad)
		invalid(t, err, "email must be an email address such as ana@example.com")
	}
}
