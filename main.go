// Command terraform-provider-svc serves the svc Terraform provider over the plugin protocol.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/svc-org/terraform-provider-svc/internal/provider"
)

// version is set by goreleaser at build time.
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()
	if !debug {
		silenceUnreadLogs()
	}
	tuneGC()
	stopProfile := startCPUProfile()
	var serveOpts []tf6server.ServeOpt
	if debug {
		serveOpts = append(serveOpts, tf6server.WithManagedDebug())
	}
	err := tf6server.Serve("registry.terraform.io/svc-org/svc", provider.NewProtocol6Server(version), serveOpts...)
	stopProfile()
	writeHeapProfile()
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

// tuneGC lets the heap grow to five times what is live between collections, under a soft
// limit of 96 MiB, unless GOGC or GOMEMLIMIT says otherwise. The plugin's live heap is small and
// does not grow with the number of resources (a few MiB: schemas, the HTTP client, the calls in
// flight), while a plan or an apply of a batch allocates hundreds of MiB of short-lived values
// call after call; at the default GOGC=100 the collector ran every 4 MiB allocated and took a
// tenth of the plugin's CPU. Should the live heap ever approach the limit, the collector runs
// more often rather than let the process grow past it.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(96 << 20)
	}
}

// writeHeapProfile writes a heap profile of this plugin process to heap-<pid>.pprof in the
// directory named by SVC_PROVIDER_MEMPROFILE, when set, once the server has stopped: what is
// still reachable then is what the provider kept across requests.
func writeHeapProfile() {
	dir := os.Getenv("SVC_PROVIDER_MEMPROFILE")
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("heap-%d.pprof", os.Getpid())))
	if err != nil {
		log.Printf("[WARN] heap profile not written: %v", err)
		return
	}
	runtime.GC() // the profile reports the heap as of the last collection
	if err := pprof.WriteHeapProfile(f); err != nil {
		log.Printf("[WARN] heap profile not written: %v", err)
	}
	_ = f.Close()
}

// silenceUnreadLogs turns the plugin's loggers off when no TF_LOG* variable is set. Terraform
// passes its environment to the plugin and throws a provider's log lines away unless TF_LOG or
// TF_LOG_PROVIDER is set; but the plugin's own loggers (the SDK's, the framework's and the
// provider's) take their level only from TF_LOG_SDK*, TF_LOG_PROVIDER_SVC and the like, and
// with none set they log at trace: every line, with its fields, is formatted as JSON and written
// to Terraform only to be discarded, a fifth of the plugin's CPU in a plan of many resources.
// Setting any TF_LOG* variable leaves every level as the SDK would set it.
func silenceUnreadLogs() {
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TF_LOG") {
			return
		}
	}
	// The SDK's subsystems (framework, protocol) check their own level before building a line's
	// fields, and an unset level there lets everything through to that point: set them too.
	for _, name := range []string{"TF_LOG_SDK", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_SDK_PROTO", "TF_LOG_PROVIDER_SVC"} {
		if err := os.Setenv(name, "off"); err != nil {
			log.Printf("[WARN] %s not set: %v", name, err)
		}
	}
}
