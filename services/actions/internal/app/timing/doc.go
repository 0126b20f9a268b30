// Package timing turns a schedule's timing (a cron expression, or every
// day, week or month at a local time) in an IANA time zone, between its
// optional start and end, into the times its slots fall due. It is pure:
// no clock, no store; the caller says "after when". Daylight saving time
// is the time zone database's: a weekly 07:00 in Europe/London stays 07:00
// local across both changes, a slot in the hour that does not exist runs
// once at the instant the clocks jump to, and a slot in the hour that
// happens twice runs once, at its first occurrence.
package timing
