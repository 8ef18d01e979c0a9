package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/internal/sandboxtest"
)

// procKB reads a field (VmRSS, VmHWM) of /proc/<pid>/status in KiB.
func procKB(tb testing.TB, pid int, field string) int {
	tb.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Skipf("no /proc here: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			require.NoError(tb, err)
			return n
		}
	}
	tb.Fatalf("%s not in /proc/%d/status", field, pid)
	return 0
}

// TestHostileInputsKeepRSSBounded replays hostile inputs against a real `partnersim
// serve` process and checks its peak RSS stays under 100 MB (decisions D17): 1,000 keyless
// requests with 1 MiB query strings and 1,000 with 60 KB ones (which reach the journal), then
// six concurrent 1 MiB control-plane bodies of 524,000 wrong items each. Before the bounds the
// process held ~1.7 GB after the first and 3.8 GB during the second. BENCHMARKS.md quotes the
// figures it logs.
func TestHostileInputsKeepRSSBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("sends ~1 GB over loopback")
	}
	c := startChild(t, t.TempDir()+"/h.db")
	pid := c.cmd.Process.Pid
	before := procKB(t, pid, "VmRSS")

	client := &http.Client{}
	sendFrom := func(from *http.Client, method, url, body string, header ...string) (int, int) {
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		require.NoError(t, err)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		res, err := from.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		n, _ := io.Copy(io.Discard, res.Body)
		return res.StatusCode, int(n)
	}
	send := func(method, url, body string, header ...string) (int, int) {
		return sendFrom(client, method, url, body, header...)
	}
	huge, long := strings.Repeat("q", 1<<20), strings.Repeat("q", 60_000)
	statuses := map[int]int{}
	for i := 0; i < 1000; i++ {
		s1, _ := send("GET", c.base+"/v1/users/?x="+huge, "")
		s2, _ := send("GET", c.base+"/v1/users/?x="+long, "")
		statuses[s1]++
		statuses[s2]++
	}
	afterQueries, peakQueries := procKB(t, pid, "VmRSS"), procKB(t, pid, "VmHWM")
	status, journalBytes := send("GET", c.base+"/_sandbox/requests?limit=1000", "", "x-sandbox-token", "crash-token")
	require.Equal(t, 200, status)

	items := `{"rules":[` + strings.Repeat("1,", 524_000-1) + `1]}`
	require.Less(t, len(items), 1<<20)
	var wg sync.WaitGroup
	sizes := make([]int, 6)
	codes := make([]int, 6)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], sizes[i] = send("PUT", c.base+"/_sandbox/faults", items, "x-sandbox-token", "crash-token", "Content-Type", "application/json")
		}()
	}
	wg.Wait()
	after := procKB(t, pid, "VmRSS")

	// Then 20 DNS-override bodies of 20,000 names each (each refused whole: at most 1,000
	// names, decisions D18), then the largest table allowed (1,000 names of 16 addresses) read
	// back, then 300 wrong sandbox tokens (throttled after 20) and 300 rebinding Hosts.
	var names strings.Builder
	names.WriteString("{")
	for i := range 20_000 {
		if i > 0 {
			names.WriteString(",")
		}
		fmt.Fprintf(&names, `"h%05d.partner.example":["93.184.216.34"]`, i)
	}
	names.WriteString("}")
	require.Less(t, names.Len(), 1<<20)
	dnsCodes := map[int]int{}
	for range 20 {
		code, _ := send("PUT", c.base+"/_sandbox/dns", names.String(), "x-sandbox-token", "crash-token", "Content-Type", "application/json")
		dnsCodes[code]++
	}
	var full strings.Builder
	full.WriteString("{")
	for i := range 1000 {
		if i > 0 {
			full.WriteString(",")
		}
		fmt.Fprintf(&full, `"h%04d.partner.example":[`, i)
		for j := range 16 {
			if j > 0 {
				full.WriteString(",")
			}
			fmt.Fprintf(&full, `"2606:4700:4700::%x"`, 0x1000+j)
		}
		full.WriteString("]")
	}
	full.WriteString("}")
	code, _ := send("PUT", c.base+"/_sandbox/dns", full.String(), "x-sandbox-token", "crash-token", "Content-Type", "application/json")
	require.Equal(t, 200, code)
	code, dnsBytes := send("GET", c.base+"/_sandbox/dns", "", "x-sandbox-token", "crash-token")
	require.Equal(t, 200, code)
	var tokenCodes map[int]int
	sandboxtest.InOneTokenWindow(func(run int) bool {
		guesser := sandboxtest.ClientFrom("127.0.0." + strconv.Itoa(2+run))
		tokenCodes = map[int]int{}
		for i := range 300 {
			code, _ := sendFrom(guesser, "GET", c.base+"/_sandbox/institutions", "", "x-sandbox-token", "guess-"+strconv.Itoa(i))
			tokenCodes[code]++
		}
		return tokenCodes[http.StatusUnauthorized] == 20
	})
	hostCodes := map[int]int{}
	for range 300 {
		req, err := http.NewRequest("GET", c.base+"/_sandbox/institutions", nil)
		require.NoError(t, err)
		req.Host = "rebind.attacker.example"
		res, err := client.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		hostCodes[res.StatusCode]++
	}
	peak := procKB(t, pid, "VmHWM")
	t.Logf("statuses of the query requests: %v; journal of 1,000 entries: %d bytes; 422 bodies: %v bytes", statuses, journalBytes, sizes)
	t.Logf("DNS floods: %v; the full table read back: %d bytes; wrong tokens: %v; rebinding Hosts: %v", dnsCodes, dnsBytes, tokenCodes, hostCodes)
	t.Logf("RSS before %d KiB, after the queries %d KiB (peak %d KiB), after the 422s %d KiB, peak %d KiB", before, afterQueries, peakQueries, after, peak)
	assert.Equal(t, map[int]int{400: 20}, dnsCodes, "every 20,000-name body is refused")
	assert.Less(t, dnsBytes, 1<<20, "the largest override table read back")
	assert.Equal(t, map[int]int{401: 20, 429: 280}, tokenCodes, "wrong tokens are throttled after 20")
	assert.Equal(t, map[int]int{421: 300}, hostCodes)
	for i := range 6 {
		assert.Equal(t, 422, codes[i])
		assert.Less(t, sizes[i], 200_000, "a 422 lists at most 1,000 items")
	}
	assert.Less(t, journalBytes, 10<<20, "the journal keeps 4 KiB per field")
	assert.Less(t, peak, 100*1024, "peak RSS under 100 MB")
}
