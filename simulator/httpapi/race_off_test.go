//go:build !race

package httpapi_test

// raceOn reports a -race build (race_on_test.go).
const raceOn = false
