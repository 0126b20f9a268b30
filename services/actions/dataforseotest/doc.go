// Package dataforseotest is a stand-in for DataForSEO's API on the loopback
// interface, for the tests of the dataforseo adapter (its contract suite
// and its failure modes) and for atrium's end-to-end tests, so that no
// test ever calls the real API or spends money.
//
// It answers the six endpoints the adapter uses in the response shapes
// DataForSEO documents (the envelope with version, status_code,
// status_message, time, cost, tasks_count, tasks_error and tasks, each task
// with its own status_code, cost, path, data and result): DataForSEO Labs'
// locations and keyword ideas, the Google Maps SERP (live, advanced), and
// the Backlinks API's backlinks, summary and bulk ranks. Its data is
// deterministic from the question (the same seed gets the same ideas and
// volumes; a Maps search ranks the businesses it was given by their
// distance from the searched point, as a map does), its prices are in the
// range of DataForSEO's published ones, and it checks HTTP Basic
// authentication.
//
// A test makes it fail the way the real API does: Inject queues faults for
// an endpoint (a status code inside an HTTP 200, such as 40202 for the rate
// limit or 40210 for exhausted funds, at the top level or the task's; an
// HTTP error status; a malformed body; an answer that never comes), and
// Config.RatePerMinute enforces an account's rate limit with 40202, as
// DataForSEO does. Calls lists what it was asked and what each answer cost.
//
// It is a test double, not a model of DataForSEO's data: figures are
// plausible, not real.
package dataforseotest
