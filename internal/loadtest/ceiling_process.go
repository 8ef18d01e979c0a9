package loadtest

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// StartCeilingProcess serves captured from a process of its own: cmd, which must run
// [ServeCeiling] (`partnersim ceiling`). The answers reach it on its standard input; it prints
// its URL on its standard output and ends when its standard input closes, so it does not
// outlive this process.
func StartCeilingProcess(cmd *exec.Cmd, captured map[string]*Captured) (*Ceiling, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("loadtest: starting the ceiling's process: %w", err)
	}
	c := &Ceiling{cmd: cmd, stdin: stdin}
	sent := make(chan error, 1)
	go func() {
		w := bufio.NewWriter(stdin)
		err := gob.NewEncoder(w).Encode(captured)
		if err == nil {
			err = w.Flush()
		}
		sent <- err
	}()
	line, readErr := bufio.NewReader(stdout).ReadString('\n')
	if err := <-sent; err != nil || readErr != nil {
		c.Close()
		return nil, fmt.Errorf("loadtest: the ceiling's process did not start serving: %w", errors.Join(err, readErr))
	}
	c.URL = strings.TrimSpace(line)
	if !strings.HasPrefix(c.URL, "http://127.0.0.1:") {
		c.Close()
		return nil, fmt.Errorf("loadtest: the ceiling's process answered %q, not its URL", line)
	}
	return c, nil
}

// ServeCeiling is the ceiling's own process ([StartCeilingProcess]): it reads the captured
// answers from in, serves them on 127.0.0.1:0, writes the URL and a newline to out, and stops
// when in ends.
func ServeCeiling(in io.Reader, out io.Writer) error {
	r := bufio.NewReader(in)
	var captured map[string]*Captured
	if err := gob.NewDecoder(r).Decode(&captured); err != nil {
		return fmt.Errorf("reading the answers to serve: %w", err)
	}
	c, err := StartCeiling(captured)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(out, c.URL); err != nil {
		c.Close()
		return err
	}
	_, _ = io.Copy(io.Discard, r)
	return c.Close()
}
