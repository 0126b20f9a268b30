//go:build !race

package main

// raceEnabled: this test binary was built without -race, so the binaries
// under test are too (see binaries).
const raceEnabled = false
