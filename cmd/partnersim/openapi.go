package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/partnersim/partnersim/simulator/openapi"
)

// newOpenAPICmd is `partnersim openapi`: it prints the OpenAPI 3.1 document the sandbox serves
// (decisions D16) — /openapi.json for the mounted versions, one version's /{version}/openapi.json,
// or the control plane's — so that it can be linted, diffed or given to a generator without a
// running sandbox.
func newOpenAPICmd() *cobra.Command {
	var (
		versions, version string
		control, adapter  bool
	)
	cmd := &cobra.Command{
		Use:   "openapi [--api-versions v1,v2 | --api-version v1 | --control-plane | --state-adapter]",
		Short: "print the OpenAPI 3.1 document the sandbox serves at /openapi.json",
		Long: "Prints, as indented JSON, an OpenAPI 3.1 document `serve` serves: /openapi.json for the mounted\n" +
			"versions (--api-versions, as for serve), /{version}/openapi.json (--api-version), or the\n" +
			"control plane's /_sandbox/openapi.json (--control-plane), or the state adapter's\n" +
			"/_sandbox/state-adapter.json (--state-adapter): the part of the control plane a contract run\n" +
			"uses to create state, which another implementation can serve (partnersim contract --state-url).",
		Example: "  partnersim openapi > openapi.json\n  partnersim openapi --api-version v1 > v1.json   # paths relative to the server /v1",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			given := 0
			for _, name := range []string{"api-versions", "api-version", "control-plane", "state-adapter"} {
				if cmd.Flags().Changed(name) {
					given++
				}
			}
			if given > 1 {
				return errors.New("openapi: give one of --api-versions, --api-version, --control-plane and --state-adapter")
			}
			var (
				doc []byte
				err error
			)
			switch {
			case control:
				doc, err = openapi.ControlPlane()
			case adapter:
				doc, err = openapi.StateAdapter()
			case version != "":
				if !validVersion(version) {
					return errors.New("openapi: --api-version is v followed by digits, e.g. v2")
				}
				doc, err = openapi.PartnerVersion(version)
			default:
				var vs []string
				if vs, err = parseAPIVersions(versions); err != nil {
					return err
				}
				doc, err = openapi.Partner(vs)
			}
			if err != nil {
				return err
			}
			if doc, err = openapi.Indented(doc); err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(doc)
			return err
		},
	}
	cmd.Flags().StringVar(&versions, "api-versions", "v1", "the mounted versions, as for serve: every path under each")
	cmd.Flags().StringVar(&version, "api-version", "", "print this version's document (paths relative to its server /{version})")
	cmd.Flags().BoolVar(&control, "control-plane", false, "print the control plane's document")
	cmd.Flags().BoolVar(&adapter, "state-adapter", false, "print the state adapter's document (the control plane's operations a contract run uses, by capability)")
	return cmd
}
