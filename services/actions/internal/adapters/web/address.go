package web

import (
	"errors"
	"net/url"

	"github.com/atrium-hq/atrium/platform/netguard"
)

// An audit fetches whatever URL a caller names, from inside Atrium's
// network. platform/netguard holds the rule of which addresses it may
// reach, the same for every outbound request a caller chooses: checked on
// the URL before anything is sent (CheckURL, every redirect hop too), and
// on the address actually dialled after DNS resolution (the transport
// dials through the guard), which a name that resolves to a private
// address cannot get past.

// CheckURL says whether Fetch may fetch raw by netguard's rule (unless the
// fetcher allows private addresses), in the words Fetch's error would use:
// Fetch makes the same check before sending and at every redirect hop. A
// run's URL was already checked by the same rule when the request was
// validated (catalog), so this is for callers outside a run, and tests. A
// name that resolves to a private address passes here and is refused when
// Fetch dials it.
func (f *Fetcher) CheckURL(raw string) error {
	if _, err := f.checkURL(raw); err != nil {
		return err
	}
	return nil
}

// checkURL is the guard's check, with the fetcher's words for a private
// address.
func (f *Fetcher) checkURL(raw string) (*url.URL, *netguard.URLError) {
	u, err := f.guard.CheckURL(raw)
	if err != nil {
		var ue *netguard.URLError
		if !errors.As(err, &ue) {
			return nil, &netguard.URLError{Reason: err.Error()}
		}
		if ue.Private {
			return nil, &netguard.URLError{Private: true, Reason: refusal(ue.Reason)}
		}
		return nil, ue
	}
	return u, nil
}

// refusal is the message of a refused private address: what the guard
// said, and who can change it.
func refusal(guard string) string {
	return guard + ", and private network addresses may not be fetched (the operator can allow them with --allow-private-fetch)"
}
