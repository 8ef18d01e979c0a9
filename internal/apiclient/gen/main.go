package main

import (
	"fmt"
	"os"

	"github.com/partnersim/partnersim/simulator/openapi"
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
	if doc, err = openapi.Indented(doc); err != nil {
		return err
	}
	return os.WriteFile(args[0], doc, 0o644)
}
