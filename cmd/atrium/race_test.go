//go:build race

package main

import "os"

// raceEnabled: this test binary was built with -race, so the binaries
// under test are too (see binaries).
const raceEnabled = true

// The race runtime of each binary under test would sleep a second at exit
// (atexit_sleep_ms, for races reported late), a second added to every run
// of `atrium -h` and every stop of a process. A race they hit still makes
// them exit 66. make test sets the same for the test binaries.
func init() {
	if _, set := os.LookupEnv("GORACE"); !set {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
}
