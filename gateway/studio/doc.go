// Package studio is Atrium Studio, the web console the agency's people use:
// editors write the sites' content, account managers run actions and watch
// their clients' results, owners manage members, keys, credits and the
// schema, and the agency's clients read their own results.
//
// It is a room of its own inside the gateway, mounted at /studio/ on the
// public listener (same origin as the JSON API, so the session cookie of
// POST /api/v1/sessions signs a person in to both). It reaches the data
// only through the services' gRPC ports, as the JSON API does, with the
// principal the gateway's Gate makes for each call: the same membership and
// site choice (gateway/internal/auth), the same judge (principal.Authorize,
// which every service runs again on every call). The console writes no
// access rule of its own; when a page hides a control, it asks the judge
// whether the person may call the RPC behind it (visit.may).
//
// Pages are server-rendered html/template (escaping by context) with a
// small vendored script library (htmx 2, in static/, served from embed.FS):
// every page and form works as plain HTML, and htmx only makes it quicker
// (boosted navigation, search as one types, live runs over server-sent
// events). No inline script and no inline style: the Content-Security-Policy
// allows only the Studio's own files (page.go).
//
// Forms that change something are POSTs carrying the session's CSRF token
// and refused from another origin (visit.checkForm). A POST whose session
// ended is not lost: the sign-in page keeps what was posted and offers to
// send it again once the person has signed in (signin.go).
package studio
