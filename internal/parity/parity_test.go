package parity

import (
	"encoding/json"
	"flag"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/partnersim/partnersim/internal/sandboxtest"
)

var record = flag.Bool("record", false, "write the framework's answers to the main module's table")

// root is the main module's directory.
const root = "../.."

// TestFastAPI sends every case to the reference app under uvicorn and to the sandbox, logs
// where they differ (the main module's TestFastAPIParity judges each difference against the
// decisions), and checks the framework's answers against the committed table — or, with
// -record, writes them there.
func TestFastAPI(t *testing.T) {
	pythonPath := os.Getenv("PARITY_PYTHONPATH")
	if pythonPath == "" {
		t.Skip("PARITY_PYTHONPATH is not set: it names the directory holding fastapi, starlette, uvicorn, h11, anyio and annotated_doc (README.md)")
	}
	addr := startRefApp(t, pythonPath)
	sb := sandboxtest.MustServe(t)
	table := sandboxtest.ParityTable{Framework: versions(t, pythonPath)}
	for _, c := range Cases() {
		c.Answer = sandboxtest.Exchange(t, addr, c.Request)
		table.Cases = append(table.Cases, c)
		got := sandboxtest.Exchange(t, sb.Listener.Addr().String(), c.Request)
		if m := sandboxtest.ParityMismatch(c.Answer, got); m != "" {
			t.Logf("%s: %s", c.Name, m)
		}
	}
	path := filepath.Join(root, sandboxtest.ParityTablePath)
	b, err := json.MarshalIndent(table, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *record {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	committed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(committed) != string(b) {
		t.Errorf("the framework no longer answers as %s records (or the cases changed): run go test -record here and review its diff", path)
	}
}

// startRefApp runs refapp/app.py under uvicorn on a loopback socket this test opens (uvicorn's
// --fd), so no port is guessed, and waits for its /health.
func startRefApp(t *testing.T, pythonPath string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := filepath.Abs(filepath.Join(root, "fixtures/default/keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", "-m", "uvicorn", "app:app", "--fd", "3", "--log-level", "critical")
	cmd.Dir = "refapp"
	// PYTHONHASHSEED fixes the order of a set's iteration: Starlette joins a route's methods,
	// a set, into Allow.
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pythonPath, "PARITY_KEYS="+keys, "PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1")
	cmd.ExtraFiles = []*os.File{f}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start uvicorn: %v", err)
	}
	f.Close()
	ln.Close()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := ln.Addr().String()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		res, err := http.Get("http://" + addr + "/health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reference app did not answer /health within 2 minutes: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// versions asks the interpreter which framework answered.
func versions(t *testing.T, pythonPath string) map[string]string {
	t.Helper()
	cmd := exec.Command("python3", "-c", `import json, sys, fastapi, starlette, pydantic, pydantic_core, uvicorn, h11
print(json.dumps({"python": sys.version.split()[0], "fastapi": fastapi.__version__, "starlette": starlette.__version__,
  "pydantic": pydantic.VERSION, "pydantic_core": pydantic_core.__version__, "uvicorn": uvicorn.__version__, "h11": h11.__version__}))`)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pythonPath)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	v := map[string]string{}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
