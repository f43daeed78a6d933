//go:build unix

package main

import (
	"bytes"
	"log"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A SIGTERM, as a runner stopping Terraform sends to its whole process group, does not end the
// plugin while Terraform (here: the parent of the test process) is there: it is logged.
func TestSIGTERMIsLeftToTerraform(t *testing.T) {
	var logged syncBuffer
	log.SetOutput(&logged)
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
	leaveTerminationToTerraform()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logged.String(), "SIGTERM ignored"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line for the SIGTERM; logged %q", logged.String())
		}
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
