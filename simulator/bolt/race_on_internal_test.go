//go:build race

package bolt

// raceOn reports a -race build, whose sync.Pool drops a quarter of what is put back: the
// allocation counts of pooled paths then mean nothing.
const raceOn = true
