// Package bench holds Atrium's end-to-end benchmarks: a load generator, the
// hand-written floor servers every list route is compared with, and the
// command (bench/cmd/bench) that runs both side by side under the same load.
// docs/performance.md records what they measured.
package bench
