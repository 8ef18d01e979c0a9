package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newRootCmd builds the command tree. Every command lives in its own file as a constructor
// newXCmd(…) *cobra.Command taking only what it uses; this is the one place they are registered.
// To add a command: write newXCmd in x.go (flags on cmd.Flags(), work in RunE, output to
// cmd.OutOrStdout()/ErrOrStderr()), add it to the list below and a row to the README's command
// table (## The binary; TestReadmeCommandTableMatchesHelp checks it). Its flags get their
// PARTNERSIM_<FLAG> environment twins from bindEnv without further work.
func newRootCmd(getenv func(string) string) *cobra.Command {
	root := &cobra.Command{
		Use:   "partnersim",
		Short: "the Partner Investing sandbox kit in one binary",
		Long: "partnersim is the Partner Investing sandbox kit in one binary: the simulator, the reference\n" +
			"webhook receiver, triggers and scenarios, the contract suites, receiver certification and\n" +
			"fixture tools.\n\n" +
			"Every flag has a PARTNERSIM_<FLAG> environment equivalent (--api-versions <- PARTNERSIM_API_VERSIONS);\n" +
			"a flag given on the command line wins.",
		SilenceErrors: true, // main prints the error once
		SilenceUsage:  true, // a failed run is not a usage mistake; flag errors say where help is
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return bindEnv(cmd.Flags(), getenv)
		},
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w (see `%s --help`)", err, cmd.CommandPath())
	})
	root.AddCommand(
		newServeCmd(getenv),
		newTriggerCmd(),
		newScenarioCmd(),
		newDeliveriesCmd(),
		newEventsCmd(),
		newSecretCmd(),
		newSnapshotCmd(),
		newReceiveCmd(getenv),
		newSendCmd(),
		newCertifyCmd(),
		newContractCmd(),
		newOpenAPICmd(),
		newLoadCmd(),
		newCeilingCmd(),
		newProxyCmd(),
		newFixturesCmd(),
		newShardMapCmd(),
		newVersionCmd(),
	)
	return root
}

// bindEnv fills every flag not given on the command line from its PARTNERSIM_* environment
// variable (--api-versions <- PARTNERSIM_API_VERSIONS). A value set this way counts as given
// (Changed), as a flag on the command line would.
func bindEnv(fs *pflag.FlagSet, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || f.Name == "help" || err != nil {
			return
		}
		env := "PARTNERSIM_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(env); v != "" {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %w", env, v, e)
			}
		}
	})
	return err
}

// newGroupCmd is a command that only holds verbs (trigger kyc, scenario run…): `X help` prints
// its help; a missing or unknown verb is a usage error naming the verbs.
func newGroupCmd(use, short, example string, verbs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:     use + " <verb>",
		Short:   short,
		Example: example,
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			names := make([]string, 0, len(cmd.Commands()))
			for _, c := range cmd.Commands() {
				names = append(names, c.Name())
			}
			want := strings.Join(names, ", ")
			switch {
			case len(args) > 0 && args[0] == "help":
				return cmd.Help()
			case len(args) > 0:
				return fmt.Errorf("%s: unknown subcommand %q: want %s", cmd.Name(), args[0], want)
			}
			w := cmd.ErrOrStderr()
			fmt.Fprintf(w, "usage: %s %s …\n\n", cmd.CommandPath(), strings.Join(names, "|"))
			for _, c := range cmd.Commands() {
				fmt.Fprintf(w, "  %-10s %s\n", c.Name(), c.Short)
			}
			fmt.Fprintf(w, "\nRun `%s <verb> --help` for a verb's flags.\n", cmd.CommandPath())
			return fmt.Errorf("%s: want a subcommand: %s", cmd.Name(), want)
		},
	}
	cmd.AddCommand(verbs...)
	return cmd
}

// noArgs refuses positional arguments for commands that take only flags.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("%s takes no arguments, got %q", cmd.Name(), args)
	}
	return nil
}
