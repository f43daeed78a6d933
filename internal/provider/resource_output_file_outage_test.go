package provider

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// A download cut short mid-stream as the service goes away for 20 s (a gateway answering 503
// with Retry-After, or a restart refusing every connection, which begins as the download reads
// the asset's record again to resume) is ridden out inside the create timeout: the apply exits 0
// with no warning and the file holds the asset's bytes. After the outage the download asks for
// the rest (Range; the strict server, which ignores ranges, serves the whole content again),
// each attempt with a URL signed for it: every content request follows a record read. The times
// are real (the provider honours Retry-After and backs off on the wall clock): the test is
// mostly idle.
func TestAccOutputFile_downloadRidesOutAnOutage(t *testing.T) {
	skipUnlessAcc(t)
	t.Parallel()
	const size, cutAt = 4 << 20, 1 << 20
	const outage = 20 * time.Second
	tests := []struct {
		name string
		arm  func(srv *emulator.Server)
		// happened fails the test unless the fault struck as armed, before the apply ended.
		happened func(t *testing.T, srv *emulator.Server, applyEnd time.Time)
	}{
		{
			name: "20 s of 503 with Retry-After",
			arm:  func(srv *emulator.Server) { srv.OutageAfterRequest(emulator.OpAssetContent, 1, outage, 2) },
			happened: func(t *testing.T, srv *emulator.Server, applyEnd time.Time) {
				outages := srv.Outages()
				if len(outages) != 1 || sum(outages[0].PerSecond) == 0 || applyEnd.Before(outages[0].To) {
					t.Fatalf("outages %+v, apply ended %s; want one that answered requests, before the apply ended", outages, applyEnd)
				}
				t.Logf("the outage answered %d requests in %s, per second: %v", sum(outages[0].PerSecond), outage, outages[0].PerSecond)
			},
		},
		{
			name: "20 s of refused connections",
			arm: func(srv *emulator.Server) {
				// The first record read is the create's; the second, the resume's, is never
				// answered: the server goes down as it arrives (a wait would race the cut).
				srv.RestartAfterRequest(emulator.OpGetAsset, 2, 0, outage)
			},
			happened: func(t *testing.T, srv *emulator.Server, applyEnd time.Time) {
				downtimes, err := srv.Downtimes()
				if err != nil || len(downtimes) != 1 || downtimes[0].To.Sub(downtimes[0].From) < outage || applyEnd.Before(downtimes[0].To) {
					t.Fatalf("downtimes %+v (%v), apply ended %s; want %s down, over before the apply ended", downtimes, err, applyEnd, outage)
				}
				// While the service is down, the gate's probes go 1 to 5 s apart (jittered).
				lag := applyEnd.Sub(downtimes[0].To)
				t.Logf("the apply ended %.1f s after the service listened again", lag.Seconds())
				if lag > 10*time.Second {
					t.Errorf("the apply ended %s after the service listened again; want the download to find it back within 10 s", lag)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newTestServer(t, emulator.Options{})
			content := make([]byte, size)
			for i := range content {
				content[i] = byte(i * 31 / 7)
			}
			id := srv.PutAsset("big.bin", "application/octet-stream", content)
			srv.Inject(emulator.Fault{Op: emulator.OpAssetContent, Nth: 1, Cut: true, CutAfter: cutAt})
			tt.arm(srv)
			cli := newTerraformCLI(t, "")
			file := filepath.Join(cli.dir, "big.bin")
			cli.writeConfig(outputFileAssetConfig(srv, id, file, ""))

			start := time.Now()
			out := cli.run("apply", "-auto-approve", "-no-color")
			t.Logf("apply: %.1f s", time.Since(start).Seconds())
			tt.happened(t, srv, time.Now())
			if strings.Contains(out, "Warning") {
				t.Errorf("the apply warned:\n%s", out)
			}
			got, err := os.ReadFile(file)
			if err != nil || !bytes.Equal(got, content) {
				t.Fatalf("the file holds %d bytes (%v), not the %d of the asset", len(got), err, len(content))
			}
			contents, records := srv.Requests(emulator.OpAssetContent), srv.Requests(emulator.OpGetAsset)
			if contents < 2 || records < contents {
				t.Errorf("%d content requests, %d record reads; want 2 or more, each after a record read of its own", contents, records)
			}
			if rng := srv.LastRequestHeader(emulator.OpAssetContent).Get("Range"); !strings.HasPrefix(rng, "bytes=") {
				t.Errorf("the last content request asked Range %q; want the rest", rng)
			}
			t.Logf("%d content requests, %d record reads; the last asked %q", contents, records, srv.LastRequestHeader(emulator.OpAssetContent).Get("Range"))
			if out, err := cli.try("plan", "-no-color", "-detailed-exitcode"); err != nil {
				t.Fatalf("the next plan is not empty (%v):\n%s", err, out)
			}
		})
	}
}
