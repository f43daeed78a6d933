package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
)

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
