//go:build !race

package bolt

// raceOn reports a -race build (race_on_internal_test.go).
const raceOn = false
