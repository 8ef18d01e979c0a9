package loadtest

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuSample is the CPU time used so far by this process and by the whole machine.
type cpuSample struct {
	own, all time.Duration
	ok       bool
}

// sampleCPU reads getrusage(2) and /proc/stat's busy time (everything but idle and iowait).
func sampleCPU() cpuSample {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuSample{}
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuSample{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return cpuSample{}
	}
	var busy int64
	for i, v := range f[1:] {
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest time is already in user
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return cpuSample{}
		}
		busy += n
	}
	const clkTck = 100 // USER_HZ on every Linux architecture Go supports
	return cpuSample{own: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), all: time.Duration(busy) * time.Second / clkTck, ok: true}
}
