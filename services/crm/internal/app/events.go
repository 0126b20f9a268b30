package app

import "github.com/atrium-hq/atrium/platform/events"

// The events the CRM service publishes are defined in platform/events
// (their subjects and payloads, key events included); the use cases
// enqueue them with those definitions, in the transactions that make them
// true.

// EventSubjects is the subject filter of the CRM's stream.
var EventSubjects = events.CRMStream.Subjects
