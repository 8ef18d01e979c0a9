package httpapi

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/partnersim/partnersim/simulator"
)

// BenchmarkAppendGenerated renders generated histories from the hour's frame, as a Get User
// Detail of a user not shown before renders its own (renderFrame.appendGenerated): users created
// up to four years before, values up to $1M.
func BenchmarkAppendGenerated(b *testing.B) {
	hour := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	frame := newRenderFrame(hour)
	r := rand.New(rand.NewPCG(29, 11))
	seeds := make([]simulator.HistorySeed, 1000)
	for i := range seeds {
		created := hour.Add(-time.Duration(r.Int64N(4*365*24)) * time.Hour)
		current := simulator.Cents(r.Int64N(1e8))
		sd, ok := simulator.HistorySeedOf(fmt.Sprint("usr_", i), created, current, current*9/10, hour)
		if !ok {
			b.Fatal(sd)
		}
		seeds[i] = sd
	}
	buf := make([]byte, 0, 64<<10)
	i := 0
	for b.Loop() {
		buf = frame.appendGenerated(buf[:0], &seeds[i%len(seeds)])
		i++
	}
}
