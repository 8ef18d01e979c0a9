package nginx

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// ErrMissing says nginx is not installed; callers skip what needs it.
var ErrMissing = errors.New("nginx is not installed (apt-get install nginx; .ci/run installs it)")

// Path is nginx's binary: on PATH, or Debian's /usr/sbin/nginx (not on a user's PATH).
func Path() (string, error) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx", nil
	}
	return "", ErrMissing
}

// Server is an nginx started by Start.
type Server struct {
	cmd    *exec.Cmd
	dir    string
	exited chan error // cmd.Wait's answer
}

// Start runs nginx in the foreground with dir as its prefix (its pid, error log and temporary
// files there) and httpConf inside its http block, and returns once listen accepts connections
// (within 10 s). workers is worker_processes.
func Start(dir, httpConf, listen string, workers int) (*Server, error) {
	bin, err := Path()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "partnersim.conf"), []byte(httpConf), 0o644); err != nil {
		return nil, err
	}
	// As root nginx runs its workers as nobody, who cannot enter a test's directory (0700) for
	// its temporary files: keep them root there.
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	main := fmt.Sprintf(`daemon off;
%[2]s
worker_processes %[3]d;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log error;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[1]s/partnersim.conf;
}
`, dir, user, workers)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-e", filepath.Join(dir, "error.log"), "-p", dir, "-c", filepath.Join(dir, "nginx.conf"))
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{cmd: cmd, dir: dir, exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait() }()
	// nginx listens within milliseconds of its start; ask until it does, or it exits.
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", listen, time.Second)
		if err == nil {
			c.Close()
			return s, nil
		}
		select {
		case err := <-s.exited:
			return nil, fmt.Errorf("nginx exited (%v) before listening on %s: %s", err, listen, s.ErrorLog())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("nginx did not listen on %s within 10s: %s", listen, s.ErrorLog())
		}
	}
}

// Stop stops nginx and waits for it: SIGINT, on which the master stops its workers too (SIGKILL
// would leave them running). Calling it again does nothing.
func (s *Server) Stop() {
	if s.exited == nil {
		return
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	<-s.exited
	s.exited = nil
}

// ErrorLog is what nginx wrote to its error log.
func (s *Server) ErrorLog() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
	return string(b)
}

// Forward is the http-block configuration of a plain forwarding proxy, the least one can do: a
// listener on listen passing every request to upstream (host:port) by proxy_pass over kept-alive
// connections, nginx's defaults otherwise, nothing logged; the Host sent is upstream's, as
// httputil.ReverseProxy's SetURL sends it. Connections are kept for as many requests as a
// benchmark makes on them.
func Forward(listen, upstream string) string {
	return fmt.Sprintf(`upstream partnersim_upstream {
    server %[2]s;
    keepalive 64;
    keepalive_requests 1000000;
}

server {
    listen %[1]s;
    keepalive_requests 1000000;
    location / {
        proxy_pass http://partnersim_upstream;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host %[2]s;
    }
}
`, listen, upstream)
}
