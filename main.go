// Command terraform-provider-svc serves the svc Terraform provider over the plugin protocol.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/svc-org/terraform-provider-svc/internal/provider"
)

// version is set by goreleaser at build time.
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()
	defer startCPUProfile()()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/svc-org/svc",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}

// startCPUProfile writes a CPU profile of this plugin process to cpu-<pid>.pprof in the
// directory named by SVC_PROVIDER_CPUPROFILE, when set (Terraform starts the provider itself, so
// an environment variable is the only way in). It returns the function that ends the profile.
func startCPUProfile() func() {
	dir := os.Getenv("SVC_PROVIDER_CPUPROFILE")
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", os.Getpid())))
	if err != nil {
		log.Printf("[WARN] CPU profile not written: %v", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Printf("[WARN] CPU profile not written: %v", err)
		_ = f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}
