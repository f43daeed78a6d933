// Command terraform-provider-svc serves the svc Terraform provider over the plugin protocol.
package main

import (
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/svc-org/terraform-provider-svc/internal/provider"
)

// version is set by goreleaser at build time.
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()
	var serveOpts []tf6server.ServeOpt
	if debug {
		serveOpts = append(serveOpts, tf6server.WithManagedDebug())
	} else {
		silenceUnreadLogs()
		leaveTerminationToTerraform()
	}
	tuneGC()
	stopProfile := startCPUProfile()
	err := tf6server.Serve("registry.terraform.io/svc-org/svc", provider.NewProtocol6Server(version), serveOpts...)
	provider.CloseJournals()
	stopProfile()
	writeHeapProfile()
	if err != nil {
		log.Fatal(err)
	}
}
