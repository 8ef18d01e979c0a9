package main

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"
)

// newSnapshotCmd is `partnersim snapshot save|restore NAME`.
func newSnapshotCmd() *cobra.Command {
	return newGroupCmd("snapshot", "save or restore the running sandbox's whole state by name",
		"  partnersim snapshot save nightly\n  partnersim snapshot restore nightly",
		newSnapshotVerbCmd("save", "save the whole state as NAME", ""),
		newSnapshotVerbCmd("restore", "restore the whole state saved as NAME", "/restore"))
}

// newSnapshotVerbCmd is one snapshot verb: POST /_sandbox/snapshots/NAME + suffix.
func newSnapshotVerbCmd(verb, short, suffix string) *cobra.Command {
	const usage = "usage: partnersim snapshot save|restore NAME [--sandbox-url URL] [--sandbox-token TOKEN]"
	cmd := &cobra.Command{Use: verb + " NAME", Short: short, Args: func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("%s: give one NAME, got %q", usage, args)
		}
		return nil
	}}
	c := controlFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := c.ready(); err != nil {
			return err
		}
		res, printed, err := c.answer(cmd.Context(), cmd.OutOrStdout(), http.MethodPost, "/_sandbox/snapshots/"+url.PathEscape(args[0])+suffix, nil)
		if err != nil || printed {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "snapshot %s %s\n", res.Get("snapshot"), res.Get("action"))
		return nil
	}
	return cmd
}
