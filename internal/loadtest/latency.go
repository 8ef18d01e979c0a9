package loadtest

import (
	"math"
	"slices"
	"time"
)

// shard is one worker's latencies, in the order measured. Workers never share a shard, so
// recording is an append to a slice preallocated for the run (no lock, no allocation while it
// has room).
type shard []time.Duration

// Latency summarises a set of latencies exactly: every sample is kept and sorted, and a
// percentile is the nearest-rank value (the smallest sample with at least that fraction of
// samples at or below it).
type Latency struct {
	Count int           `json:"count"`
	Mean  time.Duration `json:"-"`
	P50   time.Duration `json:"-"`
	P90   time.Duration `json:"-"`
	P99   time.Duration `json:"-"`
	P999  time.Duration `json:"-"`
	Max   time.Duration `json:"-"`

	// The same figures in milliseconds, for JSON readers.
	MeanMS float64 `json:"mean_ms"`
	P50MS  float64 `json:"p50_ms"`
	P90MS  float64 `json:"p90_ms"`
	P99MS  float64 `json:"p99_ms"`
	P999MS float64 `json:"p99_9_ms"`
	MaxMS  float64 `json:"max_ms"`
}

// summarize sorts all (in place) and summarises it.
func summarize(all []time.Duration) Latency {
	l := Latency{Count: len(all)}
	if len(all) == 0 {
		return l
	}
	slices.Sort(all)
	var sum time.Duration
	for _, d := range all {
		sum += d
	}
	l.Mean = sum / time.Duration(len(all))
	l.P50, l.P90, l.P99, l.P999 = percentile(all, 0.50), percentile(all, 0.90), percentile(all, 0.99), percentile(all, 0.999)
	l.Max = all[len(all)-1]
	l.MeanMS, l.P50MS, l.P90MS, l.P99MS, l.P999MS, l.MaxMS = ms(l.Mean), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.Max)
	return l
}

// percentile is the nearest-rank q-quantile of sorted, which must not be empty.
func percentile(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// ms is d in milliseconds rounded to the microsecond.
func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }
