package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/spf13/cobra"
)

// newSecretCmd is `partnersim secret rotate --institution ID --overlap 1h`.
func newSecretCmd() *cobra.Command {
	return newGroupCmd("secret", "manage an institution's webhook signing secret: rotate",
		"  partnersim secret rotate --institution ins_harbor --overlap 1h", newSecretRotateCmd())
}

// newSecretRotateCmd issues a new signing secret; during the overlap deliveries carry a
// signature with the old one as well (decisions D8).
func newSecretRotateCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "rotate --institution ID [--overlap 1h]", Short: "issue a new signing secret; during the overlap deliveries are signed with both", Args: noArgs}
	c := controlFlags(cmd.Flags())
	inst := cmd.Flags().String("institution", "", "the institution (ins_…; required)")
	overlap := cmd.Flags().Duration("overlap", 0, "how long deliveries carry the old secret's signature too, on the virtual clock (0: none; at most 720h)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := c.ready(); err != nil {
			return err
		}
		if *inst == "" {
			return errors.New("secret rotate needs --institution ins_… (partnersim serve lists the institutions)")
		}
		if *overlap < 0 || *overlap%time.Second != 0 {
			return fmt.Errorf("--overlap %s: a whole number of seconds, 0 or more (e.g. 1h, 90s)", *overlap)
		}
		w := cmd.OutOrStdout()
		res, printed, err := c.answer(cmd.Context(), w, http.MethodPost, "/_sandbox/institutions/"+url.PathEscape(*inst)+"/signing-secret/rotate",
			map[string]int64{"overlap_seconds": int64(*overlap / time.Second)})
		if err != nil || printed {
			return err
		}
		fmt.Fprintf(w, "new signing secret of %s (shown once): %s\n", *inst, res.Get("signing_secret"))
		if *overlap > 0 {
			fmt.Fprintf(w, "for %s on the virtual clock deliveries carry the old secret's signature too\n", *overlap)
		} else {
			fmt.Fprintln(w, "the old secret no longer signs deliveries")
		}
		return nil
	}
	return cmd
}
