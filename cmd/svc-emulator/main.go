// Command svc-emulator runs the local reference server of the workflow
// execution service until SIGINT or SIGTERM.
//
//	svc-emulator [-listen 127.0.0.1:0] [-url-file PATH] [-token T] [-prefix /deployment/x]
//	             [-absolute-links] [-logs] [-step-duration 50ms] [-node-duration 0] [-workers 2]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/svc-org/terraform-provider-svc/internal/atomicfile"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	if err := run(os.Args[1:], os.Stdout, stop); err != nil {
		fmt.Fprintln(os.Stderr, "svc-emulator:", err)
		os.Exit(1)
	}
}

// run serves until stop receives a value or is closed.
func run(args []string, stdout io.Writer, stop <-chan os.Signal) error {
	fs := flag.NewFlagSet("svc-emulator", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	urlFile := fs.String("url-file", "", "write the endpoint URL to this file (atomically)")
	token := fs.String("token", "", "require the token: Authorization: Bearer on /api/v2 routes, X-API-Key (socket: token=) on v1 routes")
	prefix := fs.String("prefix", "", "mount prefix, e.g. /deployment/demo")
	absolute := fs.Bool("absolute-links", false, "return absolute links instead of host-relative ones")
	logs := fs.Bool("logs", false, "capture job logs and offer urls.logs")
	stepDuration := fs.Duration("step-duration", 0, "duration of each sampler step")
	nodeDuration := fs.Duration("node-duration", 0, "duration of each node")
	workers := fs.Int("workers", 1, "jobs running at once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}

	srv := emulator.New(emulator.Options{
		Token:         *token,
		MountPrefix:   *prefix,
		AbsoluteLinks: *absolute,
		LogsLink:      *logs,
		StepDuration:  *stepDuration,
		NodeDuration:  *nodeDuration,
		Workers:       *workers,
	})
	defer srv.Close()
	if err := srv.StartOn(*listen); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "svc-emulator listening on %s\n", srv.URL())
	if *urlFile != "" {
		if err := atomicfile.WriteString(*urlFile, srv.URL()); err != nil {
			return err
		}
	}
	<-stop
	return nil
}
