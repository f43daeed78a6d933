package main

import (
	"log"
	"os"
	"os/signal"
	"syscall"
)

// leaveTerminationToTerraform keeps a SIGTERM from killing the plugin while Terraform runs.
// Whoever stops a run (a container runtime, a CI runner's cancel button, systemd) signals
// Terraform's whole process group, this plugin included. Terraform takes SIGTERM as an
// interrupt, as it takes Ctrl-C: it asks the provider to stop, waits for the calls in flight to
// return, which puts the id of every job already created in state, then stops the plugin
// itself. Dying at the signal would lose those ids, and the next apply would run those jobs
// again. go-plugin ignores SIGINT for the same reason; SIGTERM is logged and ignored the same
// way, unless Terraform is gone (the plugin was handed to another parent): nothing would stop
// the plugin then, so the signal ends it as usual.
func leaveTerminationToTerraform() {
	terraform := os.Getppid()
	terms := make(chan os.Signal, 1)
	signal.Notify(terms, syscall.SIGTERM)
	go func() {
		for range terms {
			if os.Getppid() != terraform {
				os.Exit(128 + int(syscall.SIGTERM))
			}
			log.Printf("[INFO] SIGTERM ignored: Terraform takes it as an interrupt and stops this provider once its calls return")
		}
	}()
}
