package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// newVersionCmd is `partnersim version`: the module version and the commit it was built from,
// as the Go toolchain recorded them in the binary.
func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the module version and the commit this binary was built from",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info, _ := debug.ReadBuildInfo()
			fmt.Fprintln(cmd.OutOrStdout(), versionLine(info))
			return nil
		},
	}
}

// versionLine renders build info as "partnersim v1.2.3 commit 0123abcd… (2026-…, modified) go1.x".
// A binary built without module or VCS information (go run, go test) says so instead.
func versionLine(info *debug.BuildInfo) string {
	if info == nil {
		return "partnersim (no build information)"
	}
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	parts := []string{"partnersim", version}
	if rev := settings["vcs.revision"]; rev != "" {
		commit := "commit " + rev
		var notes []string
		if t := settings["vcs.time"]; t != "" {
			notes = append(notes, t)
		}
		if settings["vcs.modified"] == "true" {
			notes = append(notes, "modified")
		}
		if len(notes) > 0 {
			commit += " (" + strings.Join(notes, ", ") + ")"
		}
		parts = append(parts, commit)
	} else {
		parts = append(parts, "commit unknown (built without VCS information)")
	}
	return strings.Join(append(parts, info.GoVersion), " ")
}
