package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/partnersim/partnersim/openapi"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: gen FILE")
	}
	doc, err := openapi.PartnerVersion30("v1")
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, doc, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	return os.WriteFile(args[0], out.Bytes(), 0o644)
}
