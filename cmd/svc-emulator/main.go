// Command svc-emulator runs the local reference server of the workflow
// execution service until SIGINT or SIGTERM.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "svc-emulator:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("svc-emulator", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	urlFile := fs.String("url-file", "", "write the endpoint URL to this file (atomically)")
	token := fs.String("token", "", "require Authorization: Bearer <token> on /api/v2 routes")
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
	fmt.Printf("svc-emulator listening on %s\n", srv.URL())
	if *urlFile != "" {
		if err := writeFileAtomic(*urlFile, srv.URL()); err != nil {
			return err
		}
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	return nil
}

// writeFileAtomic writes to a temporary file beside path, then renames it, so
// readers never see a partial file.
func writeFileAtomic(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".svc-emulator-url-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
